package cli

import (
	"errors"
	"fmt"

	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/internal/cycle"
)

// wrapAdvice is what the wrapper tells its user to do after a refusal, in
// its flags (docs/decisions.md#D8).
var wrapAdvice = buildguard.Advice{
	buildguard.FixRetry:        "check that the application is running and responsive, and retry",
	buildguard.FixDiscovery:    "run buildguard in the application's project directory, where the agent writes .reclazz/agent.port, or pass --port-file PATH or --port N",
	buildguard.FixPortFile:     "point --port-file at the port file the running agent wrote (.reclazz/agent.port in its project), or pass --port N",
	buildguard.FixPort:         "pass --port the agent's port (1 to 65535), or --port-file its port file",
	buildguard.FixStartAgent:   "start the application with the Reclazz agent attached, or point --port/--port-file at its current port",
	buildguard.FixNotAgent:     "what answers on that port is not a Reclazz agent: point --port/--port-file at the agent's current port",
	buildguard.FixTimeout:      "pass --timeout-ms a whole number of milliseconds from 1 to 60000",
	buildguard.FixAckTimeout:   "the agent did not answer in time: check that the application is responsive, or raise --timeout-ms",
	buildguard.FixOwner:        "another build holds the output: rerun it with the --owner it printed to finish or recover it, or restart the application if that owner is lost",
	buildguard.FixTranscript:   "pass --transcript a file in a writable directory",
	buildguard.FixUpgradeAgent: "the agent is older than build ownership: attach a Reclazz agent that answers BUILD with owner=, then retry",
	buildguard.FixRerun:        "rerun the build with --owner and the owner printed above",
	buildguard.FixRelease:      "rerun the build with --owner and the owner printed above to release it",
}

// toolAdvice is what the other tool subcommands tell their user when the
// agent cannot be found or confirmed, in their flags.
var toolAdvice = buildguard.Advice{
	buildguard.FixFindAgent:      "run the app with the Reclazz agent, or pass --port/--port-file",
	buildguard.FixConfirmProject: "Check DOCTOR workingDirectory and --project-dir.",
}

// ownerLine is the line the wrapper prints before it connects
// (docs/decisions.md#D8): the owner, and the flag that recovers the build.
func ownerLine(owner string) string {
	return fmt.Sprintf("buildguard: build owner: %s; retain it to recover with --owner %s if this build fails or disconnects", owner, owner)
}

// wrapText is err's text for the wrapper's stderr line: a refusal with the
// wrapper's advice, an unconfirmed or abandoned finish with how to rerun, a
// usage error in the option's flag.
func wrapText(err error) string {
	var oe *buildguard.OptionError
	if errors.As(err, &oe) {
		switch oe.Setting {
		case buildguard.SettingOwner:
			return err.Error() + "; to recover, pass the owner the build printed, or leave --owner out for a fresh one"
		case buildguard.SettingGrace:
			return buildguard.ErrInvalidOption.Error() + ": --grace needs a duration such as 10s or 500ms"
		}
	}
	var ce *cycle.ContinuousError
	if errors.As(err, &ce) {
		return fmt.Sprintf("%v: one guarded build would hold the output of every cycle until Gradle exits; put --continuous before --, as in buildguard --continuous -- ./gradlew %s classes, to guard each cycle as one build", ce, ce.Flag)
	}
	return wrapAdvice.Word(err)
}

// waitLine is the line the wrapper prints when, after an interrupt, it
// waits for the agent (docs/decisions.md#D23).
func waitLine(w buildguard.Wait) string {
	return fmt.Sprintf("buildguard: interrupted; waiting up to %v for the agent to acknowledge BUILD %s; interrupt again to stop waiting", w.Limit, w.State)
}
