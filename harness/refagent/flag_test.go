package refagent_test

import (
	"errors"
	"testing"

	"github.com/buildguard/buildguard/harness/refagent"
)

func TestAgentFlag(t *testing.T) {
	t.Parallel()
	got, err := refagent.AgentFlag("/j/agent.jar", refagent.Options{
		WatchDirs:       []string{"/p with space/a/out", "/p with space/b/out"},
		PortFile:        "/p with space/agent.port",
		StartupDelaySec: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "-javaagent:/j/agent.jar=watchDirs=/p with space/a/out;/p with space/b/out,startupDelaySec=1,debounceMs=100,portFile=/p with space/agent.port"
	if got != want {
		t.Errorf("AgentFlag =\n %s\nwant\n %s", got, want)
	}
	got, err = refagent.AgentFlag("/j/agent.jar", refagent.Options{TCPNoDelay: true})
	if want := "-javaagent:/j/agent.jar=watchDirs=,startupDelaySec=0,debounceMs=100,tcpNoDelay=true"; err != nil || got != want {
		t.Errorf("AgentFlag with TCPNoDelay = %s, %v; want %s", got, err, want)
	}

	for name, tc := range map[string]struct {
		jar string
		o   refagent.Options
	}{
		"comma in watch dir":     {"/j.jar", refagent.Options{WatchDirs: []string{"/a,b"}}},
		"semicolon in watch dir": {"/j.jar", refagent.Options{WatchDirs: []string{"/a;b"}}},
		"empty watch dir":        {"/j.jar", refagent.Options{WatchDirs: []string{""}}},
		"comma in port file":     {"/j.jar", refagent.Options{PortFile: "/a,b"}},
		"equals in jar":          {"/x=y/j.jar", refagent.Options{}},
		"delay out of range":     {"/j.jar", refagent.Options{StartupDelaySec: 301}},
		"debounce out of range":  {"/j.jar", refagent.Options{DebounceMs: -1}},
		"port out of range":      {"/j.jar", refagent.Options{StatusPort: 65536}},
	} {
		if _, err := refagent.AgentFlag(tc.jar, tc.o); !errors.Is(err, refagent.ErrBadOption) {
			t.Errorf("%s: err = %v, want ErrBadOption", name, err)
		}
	}
}
