package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
)

// Overrides lists why host h would not start the entry of its file
// because of settings kept elsewhere (docs/hosts.md#1): Claude Code's
// local-scope server of the same name in ~/.claude.json (it wins over
// .mcp.json), buildguard in a disabledMcpjsonServers or disabledMcpServers
// list; Gemini CLI's user settings that exclude it. unchecked names the
// files that exist but could not be read within init's bounds.
func Overrides(h Host, env Env) (problems, unchecked []string) {
	look := func(path string, check func(doc map[string]any) []string) {
		doc, err := readJSON(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			unchecked = append(unchecked, fmt.Sprintf("%s (%v)", path, trimPath(err, path)))
		default:
			for _, p := range check(doc) {
				problems = append(problems, path+" "+p)
			}
		}
	}
	switch h.Name {
	case "claude":
		for _, p := range []string{
			filepath.Join(env.ProjectDir, ".claude", "settings.json"),
			filepath.Join(env.ProjectDir, ".claude", "settings.local.json"),
			filepath.Join(env.Home, ".claude", "settings.json"),
		} {
			look(p, func(doc map[string]any) []string { return listed(doc, "disabledMcpjsonServers") })
		}
		look(filepath.Join(env.Home, ".claude.json"), func(doc map[string]any) []string {
			projects, _ := doc["projects"].(map[string]any)
			project, _ := projects[env.ProjectDir].(map[string]any)
			out := listed(project, "disabledMcpjsonServers")
			out = append(out, listed(project, "disabledMcpServers")...)
			if servers, _ := project["mcpServers"].(map[string]any); servers[EntryName] != nil {
				out = append(out, "has a local-scope buildguard server for this project, which Claude Code starts instead of the one in .mcp.json")
			}
			return out
		})
	case "gemini":
		look(filepath.Join(env.Home, ".gemini", "settings.json"), func(doc map[string]any) []string {
			return notStarted(h, map[string]any{"mcp": doc["mcp"]}, false)
		})
	}
	return problems, unchecked
}

// listed returns a problem when doc's list key names buildguard.
func listed(doc map[string]any, key string) []string {
	if list, ok := doc[key].([]any); ok && slices.Contains(list, any(EntryName)) {
		return []string{fmt.Sprintf("lists buildguard in %s", key)}
	}
	return nil
}
