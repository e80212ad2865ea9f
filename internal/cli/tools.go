package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/buildguard/buildguard/internal/boundedfile"
	"github.com/buildguard/buildguard/tools"
)

// toolCommand is a CLI subcommand that answers with a tool's JSON (docs/decisions.md#D2).
type toolCommand struct {
	tool  string
	usage string
	// flags are the subcommand's own flags besides the endpoint flags, mapped
	// to tool argument names.
	flags map[string]string
	// args turns the positional arguments (and own flags) into tool arguments.
	args func(pos []string, own map[string]string) (map[string]any, error)
}

// endpointFlags map the endpoint flags to the tools' argument names.
var endpointFlags = map[string]string{
	"--project-dir": "projectDir", "--port-file": "portFile", "--port": "port",
	"--hybris-home": "hybrisHome", "--timeout-ms": "timeoutMs",
}

const endpointUsage = "[--project-dir PATH] [--port-file PATH] [--port N] [--hybris-home PATH] [--timeout-ms N]"

var toolCommands = map[string]toolCommand{
	"status":  {tool: tools.Status, usage: "buildguard status " + endpointUsage, args: noPositional},
	"doctor":  {tool: tools.Doctor, usage: "buildguard doctor " + endpointUsage, args: noPositional},
	"scan":    {tool: tools.Scan, usage: "buildguard scan " + endpointUsage, args: noPositional},
	"pending": {tool: tools.Pending, usage: "buildguard pending " + endpointUsage, args: noPositional},
	"diagnose": {tool: tools.Diagnose, usage: "buildguard diagnose CLASS " + endpointUsage,
		args: func(pos []string, _ map[string]string) (map[string]any, error) {
			if len(pos) != 1 {
				return nil, errors.New("diagnose takes one CLASS")
			}
			return map[string]any{"className": pos[0]}, nil
		}},
	"verify": {tool: tools.Verify, usage: "buildguard verify CLASS (SHA256 | --class-file FILE) " + endpointUsage,
		flags: map[string]string{"--class-file": "classFile"}, args: verifyArgs},
	"verify-batch": {tool: tools.VerifyBatch, usage: "buildguard verify-batch (CLASS=SHA256 | CLASS=@FILE)... " + endpointUsage, args: batchArgs},
	"reload": {tool: tools.ReloadControl, usage: "buildguard reload pause|resume|status " + endpointUsage,
		args: func(pos []string, _ map[string]string) (map[string]any, error) {
			if len(pos) != 1 {
				return nil, errors.New("reload takes one action: pause, resume or status")
			}
			return map[string]any{"action": pos[0]}, nil
		}},
	"build": {tool: tools.Build, usage: "buildguard build started|ok|failed --owner TOKEN " + endpointUsage,
		flags: map[string]string{"--owner": "owner"},
		args: func(pos []string, own map[string]string) (map[string]any, error) {
			if len(pos) != 1 {
				return nil, errors.New("build takes one state: started, ok or failed")
			}
			if _, ok := own["owner"]; !ok {
				return nil, errors.New("build needs --owner TOKEN (the same token for started, ok and failed)")
			}
			return map[string]any{"state": pos[0], "owner": own["owner"]}, nil
		}},
}

func noPositional(pos []string, _ map[string]string) (map[string]any, error) {
	if len(pos) != 0 {
		return nil, fmt.Errorf("unexpected argument %q", pos[0])
	}
	return map[string]any{}, nil
}

func verifyArgs(pos []string, own map[string]string) (map[string]any, error) {
	file, hasFile := own["classFile"]
	switch {
	case hasFile && len(pos) == 1:
		sum, err := classFileSHA256(file)
		if err != nil {
			return nil, err
		}
		return map[string]any{"className": pos[0], "sha256": sum}, nil
	case !hasFile && len(pos) == 2:
		return map[string]any{"className": pos[0], "sha256": pos[1]}, nil
	}
	return nil, errors.New("verify takes CLASS and either SHA256 or --class-file FILE")
}

// classFileSHA256 hashes a class file named on the command line, read with
// the bound of docs/decisions.md#D13, before anything connects.
func classFileSHA256(file string) (string, error) {
	sum, err := boundedfile.SHA256(file, boundedfile.ClassFileLimit)
	if err != nil {
		return "", fmt.Errorf("reading the class file: %w; give the path of a regular .class file", err)
	}
	return sum, nil
}

func batchArgs(pos []string, _ map[string]string) (map[string]any, error) {
	if len(pos) == 0 {
		return nil, errors.New("verify-batch takes at least one CLASS=SHA256 or CLASS=@FILE")
	}
	items := make([]map[string]string, 0, len(pos))
	for _, p := range pos {
		class, value, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not CLASS=SHA256 or CLASS=@FILE", p)
		}
		if file, isFile := strings.CutPrefix(value, "@"); isFile {
			sum, err := classFileSHA256(file)
			if err != nil {
				return nil, err
			}
			value = sum
		}
		items = append(items, map[string]string{"className": class, "sha256": value})
	}
	return map[string]any{"items": items}, nil
}

// parseToolArgs splits args into positionals and flags; flags may stand
// before or after the positionals, as --flag VALUE or --flag=VALUE, each at
// most once.
func parseToolArgs(cmd toolCommand, args []string) (pos []string, toolArgs map[string]string, own map[string]string, err error) {
	toolArgs, own = map[string]string{}, map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "--") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		dst, key := toolArgs, endpointFlags[name]
		if key == "" {
			dst, key = own, cmd.flags[name]
		}
		if key == "" {
			return nil, nil, nil, fmt.Errorf("unknown flag %s", name)
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, nil, nil, fmt.Errorf("flag %s needs a value", name)
			}
			i++
			value = args[i]
		}
		if _, dup := dst[key]; dup {
			return nil, nil, nil, fmt.Errorf("flag %s given twice", name)
		}
		dst[key] = value
	}
	return pos, toolArgs, own, nil
}

// runTool runs a tool subcommand: it prints the tool's JSON object on one
// line and exits 0 when the result is not an error, 1 when it is, and 2 when
// the arguments are invalid (the cases MCP answers with -32602).
func runTool(name string, args []string, stdout, stderr io.Writer) ExitCode {
	cmd := toolCommands[name]
	for _, a := range args {
		if a == "--help" || a == "-h" {
			fmt.Fprintf(stderr, "Usage: %s\n", cmd.usage)
			return ExitOK
		}
	}
	usageErr := func(err error) ExitCode {
		fmt.Fprintf(stderr, "buildguard %s: %v\nUsage: %s\n", name, err, cmd.usage)
		return ExitUsage
	}
	pos, endpoint, own, err := parseToolArgs(cmd, args)
	if err != nil {
		return usageErr(err)
	}
	specific, err := cmd.args(pos, own)
	if err != nil {
		return usageErr(err)
	}
	raw := map[string]json.RawMessage{}
	for k, v := range endpoint {
		raw[k], _ = json.Marshal(v)
	}
	for k, v := range specific {
		if raw[k], err = json.Marshal(v); err != nil {
			return usageErr(err)
		}
	}
	res, err := tools.New(tools.Config{}).Call(context.Background(), cmd.tool, raw)
	var argErr *tools.ArgError
	switch {
	case errors.As(err, &argErr):
		return usageErr(argErr)
	case err != nil:
		fmt.Fprintf(stderr, "buildguard %s: internal error: %v\n", name, err)
		return ExitFailure
	}
	stdout.Write(append(res.Data, '\n'))
	if res.IsError {
		return ExitFailure
	}
	return ExitOK
}
