package cli

import (
	"errors"
	"flag"
	"io"
	"strings"
)

// A flagSet reads the command line of one subcommand by the one grammar of
// docs/decisions.md#D1, on the standard library's flag package:
//
//   - a flag is `--name` or `-name`; its value is the next argument,
//     whatever it is, or the text after `=` (`--name=value`, empty too);
//   - a switch (`--all`) takes no value, and `--all=...` is refused;
//   - a flag is given at most once unless it is declared repeatable;
//   - `-h`, `--help` answer with the usage (flag.ErrHelp);
//   - the operands (positional arguments) are read as the subcommand's
//     operandRule says, and `--` ends the flags.
//
// The flag package's own messages are never shown: each error is worded by
// the subcommand's flagMessages, so every front keeps the texts its contract
// gives.
type flagSet struct {
	fs       *flag.FlagSet
	operands operandRule
	msgs     flagMessages
	given    map[string]bool // the flags given so far, by name
	round    []string        // the arguments of the running fs.Parse
	done     int             // how many of round the flags given so far took
	err      error           // what a flag's own check refused
}

// operandRule says where a subcommand takes operands.
type operandRule int

const (
	// noOperands: every argument is a flag or a flag's value; an operand,
	// and `--` itself, is refused as an unknown flag (mcp, init).
	noOperands operandRule = iota
	// operandsAnywhere: operands may stand before, between and after the
	// flags, and every argument after `--` is one (the tool subcommands).
	operandsAnywhere
	// commandAfterDashes: flags only, up to the `--` that must follow
	// them; every argument after it is an operand (the wrapper's command).
	commandAfterDashes
)

// flagMessages words the parse errors of one subcommand. flag is the flag's
// name as docs/decisions.md#D1 spells it (`--port`); tok is the argument as
// it was typed.
type flagMessages struct {
	// unknown: tok is no flag of the subcommand, or an operand where it
	// takes none.
	unknown func(tok string) error
	// missing: flag is the last argument, without a value.
	missing func(flag string) error
	// twice: flag, given at most once, was given again.
	twice func(flag string) error
	// valued: tok gives a switch a value.
	valued func(tok string) error
	// help: tok asks for the usage (`-h`, `--help`). Nil means
	// flag.ErrHelp, which the subcommand answers with its usage.
	help func(tok string) error
}

// newFlagSet returns an empty flagSet that reads operands by rule and
// words its errors by msgs.
func newFlagSet(rule operandRule, msgs flagMessages) *flagSet {
	fs := flag.NewFlagSet("buildguard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{fs: fs, operands: rule, msgs: msgs, given: map[string]bool{}}
}

// value declares the flag `--name` (flag) that takes a value: store
// receives each value given and may refuse it (its error is the parse's).
// A repeatable flag may be given again, and store receives every value.
func (s *flagSet) value(flag string, repeatable bool, store func(v string) error) {
	s.fs.Var(&flagValue{set: s, flag: flag, repeatable: repeatable, store: store}, strings.TrimPrefix(flag, "--"), "")
}

// onOff declares the switch `--name` (flag): on is called each time it is
// given.
func (s *flagSet) onOff(flag string, repeatable bool, on func()) {
	store := func(string) error { on(); return nil }
	s.fs.Var(&flagValue{set: s, flag: flag, repeatable: repeatable, store: store, isSwitch: true}, strings.TrimPrefix(flag, "--"), "")
}

// parse reads args and returns the operands in their order. ended reports
// a `--` that ended the flags. A `-h` or `--help` before anything wrong is
// flag.ErrHelp.
func (s *flagSet) parse(args []string) (operands []string, ended bool, err error) {
	for len(args) > 0 {
		s.round, s.done, s.err = args, 0, nil
		if err := s.fs.Parse(args); err != nil {
			return nil, false, s.failure(err)
		}
		rest := s.fs.Args()
		if len(args)-len(rest) > s.done { // no flag took the last one: `--`
			if s.operands == noOperands {
				return nil, false, s.msgs.unknown("--")
			}
			return append(operands, rest...), true, nil
		}
		if len(rest) == 0 {
			break
		}
		if s.operands != operandsAnywhere {
			return nil, false, s.msgs.unknown(rest[0])
		}
		operands, args = append(operands, rest[0]), rest[1:]
	}
	return operands, false, nil
}

// failure words what ended fs.Parse with err. The argument it could not
// read is the first one after those the flags given so far took.
func (s *flagSet) failure(err error) error {
	if s.err != nil {
		return s.err
	}
	tok := s.round[s.done]
	name, hasValue := flagName(tok)
	switch {
	case errors.Is(err, flag.ErrHelp) && !hasValue && s.msgs.help != nil:
		return s.msgs.help(tok)
	case errors.Is(err, flag.ErrHelp) && !hasValue:
		return flag.ErrHelp
	case name == "" || s.fs.Lookup(name) == nil:
		return s.msgs.unknown(tok)
	}
	return s.msgs.missing("--" + name)
}

// flagName is the name in a flag argument (`--name=value` is name), "" when
// it is none the flag package reads, and whether it carries `=value`.
func flagName(tok string) (name string, hasValue bool) {
	name = strings.TrimPrefix(strings.TrimPrefix(tok, "-"), "-")
	if name == "" || name[0] == '-' || name[0] == '=' {
		return "", false
	}
	name, _, hasValue = strings.Cut(name, "=")
	return name, hasValue
}

// flagValue is one declared flag, as the flag package holds it.
type flagValue struct {
	set        *flagSet
	flag       string
	repeatable bool
	isSwitch   bool
	store      func(string) error
}

func (v *flagValue) String() string   { return "" }
func (v *flagValue) IsBoolFlag() bool { return v.isSwitch }

// Set takes one occurrence of the flag. The flag package calls it with the
// arguments the occurrence took already behind it, so the argument that
// named the flag is known.
func (v *flagValue) Set(value string) error {
	s := v.set
	took := len(s.round) - len(s.fs.Args())
	switch {
	case v.isSwitch && strings.Contains(s.round[took-1], "="):
		s.err = s.msgs.valued(s.round[took-1])
	case s.given[v.flag] && !v.repeatable:
		s.err = s.msgs.twice(v.flag)
	default:
		s.err = v.store(value)
	}
	if s.err != nil {
		return s.err
	}
	s.given[v.flag], s.done = true, took
	return nil
}
