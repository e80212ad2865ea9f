package safebuild

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// Bounds of changedClasses (docs/safe-build.md#8).
const (
	// MaxChangedClasses is the most classes a result lists and verifies; the
	// count says how many changed in all.
	MaxChangedClasses = 64
	// maxScannedFiles bounds the walk of the watched directories.
	maxScannedFiles = 200000
	// DefaultVerifyWait bounds the wait for the receipts of the changed
	// classes after BUILD ok was acknowledged: the agent captures and
	// reloads asynchronously.
	DefaultVerifyWait = 15 * time.Second
	// verifyPoll is the pause between two VERIFY rounds of a class whose
	// reload has not completed yet.
	verifyPoll = 50 * time.Millisecond
)

// stamp identifies one version of a class file without reading it.
type stamp struct {
	size  int64
	mtime time.Time
}

// classFiles are the class files under the watched directories, by path.
type classFiles map[string]classFile

type classFile struct {
	class string
	stamp stamp
}

// scanClasses walks dirs for class files. complete is false when a
// directory could not be read or the walk hit its bound.
func scanClasses(dirs []string) (files classFiles, complete bool) {
	files, complete = classFiles{}, true
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				complete = false
				return nil
			}
			if d.IsDir() || !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".class") {
				return nil
			}
			if len(files) >= maxScannedFiles {
				complete = false
				return filepath.SkipAll
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return nil
			}
			class := strings.ReplaceAll(strings.TrimSuffix(rel, ".class"), string(filepath.Separator), ".")
			if !agentproto.ValidClassName(class) { // module-info, package-info
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			if _, seen := files[path]; !seen {
				files[path] = classFile{class: class, stamp: stamp{fi.Size(), fi.ModTime()}}
			}
			return nil
		})
		if err != nil {
			complete = false
		}
	}
	return files, complete
}

// changedSince lists the class files of after that are new or differ from
// before, sorted by class name (then path).
func changedSince(before, after classFiles) []changedFile {
	var out []changedFile
	for path, f := range after {
		if b, ok := before[path]; ok && b.stamp.size == f.stamp.size && b.stamp.mtime.Equal(f.stamp.mtime) {
			continue
		}
		out = append(out, changedFile{class: f.class, path: path})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].class != out[j].class {
			return out[i].class < out[j].class
		}
		return out[i].path < out[j].path
	})
	return out
}

type changedFile struct{ class, path string }

// watchedDirs returns the usable directories of DOCTOR evidence, and whether
// they are all the agent watches.
func watchedDirs(d *agentproto.Doctor) ([]string, bool) {
	if d == nil || d.Status != agentproto.DoctorObserved {
		return nil, false
	}
	var dirs []string
	for _, p := range d.WatchedDirectories {
		if !filepath.IsAbs(p) {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, filepath.Clean(p))
		}
	}
	complete := !d.WatchSampleTruncated && d.WatchedDirectoryCount == len(d.WatchedDirectories)
	return dirs, complete
}

// ChangedClasses is the proof of the bytes after BUILD ok
// (docs/safe-build.md#8).
type ChangedClasses struct {
	// Count is how many class files were written during the build in the
	// watched directories searched.
	Count int `json:"count"`
	// Complete is false when the search may have missed some: the agent's
	// evidence was unavailable or named only a sample of its directories,
	// or a directory could not be read.
	Complete bool `json:"complete"`
	// AllApplied is true when every class of Count was listed and its
	// receipt is applied with the built bytes.
	AllApplied bool `json:"allApplied"`
	// Classes are the first MaxChangedClasses by name, each verified.
	Classes []ClassReceipt `json:"classes"`
}

// ClassReceipt is one changed class and what the agent says of its bytes.
type ClassReceipt struct {
	// ClassName is the binary class name.
	ClassName string `json:"className"`
	// SHA256 is the hash of the class file as the build left it.
	SHA256 string `json:"sha256"`
	// Status is the VERIFY receipt status (applied, running, failed,
	// unverified, mismatch, not_observed) or unavailable when no valid
	// receipt was read.
	Status string `json:"status"`
	// Detail is the receipt's detail, or why there is none.
	Detail string `json:"detail"`
}

// verifyClasses hashes the changed files and asks the agent for each
// receipt on conn, polling until it is applied or ends otherwise, all within
// ctx. A changed session id (the JVM restarted) ends the verification.
func verifyClasses(ctx context.Context, conn verifier, changed []changedFile) []ClassReceipt {
	if len(changed) > MaxChangedClasses {
		changed = changed[:MaxChangedClasses]
	}
	out := make([]ClassReceipt, 0, len(changed))
	session := ""
	broken := ""
	for _, f := range changed {
		r := ClassReceipt{ClassName: f.class, Status: "unavailable"}
		sum, err := agentproto.FileSHA256(f.path)
		if err != nil {
			r.Detail = "the class file could not be read after the build: " + err.Error()
			out = append(out, r)
			continue
		}
		r.SHA256 = sum
		if broken != "" {
			r.Detail = broken
			out = append(out, r)
			continue
		}
		rec, err := pollReceipt(ctx, conn, f.class, sum)
		switch {
		case err != nil:
			r.Detail = "no valid receipt: " + err.Error()
			if !errors.Is(err, errStillRunning) {
				broken = "not queried: an earlier VERIFY failed (" + err.Error() + ")"
			}
		case session != "" && rec.SessionID != session:
			r.Detail = "the agent's session changed: the application restarted during the verification"
			broken = r.Detail
		default:
			session = rec.SessionID
			r.Status, r.Detail = rec.Status, rec.Detail
		}
		out = append(out, r)
	}
	return out
}

// verifier is the part of *agentproto.Conn the verification uses.
type verifier interface {
	Verify(ctx context.Context, class, sha256 string) (*agentproto.Receipt, error)
}

var errStillRunning = errors.New("the reload did not complete before the verification deadline")

// pollReceipt asks VERIFY until the receipt is final: applied, failed or
// unverified. running, mismatch (older bytes still latest) and
// not_observed (not captured yet) are asked again until ctx ends; the last
// of them is returned then.
func pollReceipt(ctx context.Context, conn verifier, class, sum string) (*agentproto.Receipt, error) {
	var last *agentproto.Receipt
	for {
		r, err := conn.Verify(ctx, class, sum)
		if err != nil {
			if last != nil && ctx.Err() != nil {
				return last, nil
			}
			if ctx.Err() != nil {
				return nil, errStillRunning
			}
			return nil, err
		}
		switch r.Status {
		case agentproto.ReceiptApplied, agentproto.ReceiptFailed, agentproto.ReceiptUnverified:
			return r, nil
		}
		last = r
		t := time.NewTimer(verifyPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return last, nil
		}
	}
}
