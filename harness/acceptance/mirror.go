package acceptance

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// mirrorRepository makes dst a per-file symlink mirror of the Maven
// repository src: every directory is a real directory, every file a symlink
// to the source file. A directory symlink would let Maven write through into
// src; a per-file link at worst replaces the link. Symlinks inside src that
// resolve to directories are followed and mirrored as real directories. dst
// must not exist. It returns the number of linked files.
func mirrorRepository(src, dst string) (int, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return 0, fmt.Errorf("resolving %s: %w", src, err)
	}
	info, err := os.Stat(src)
	if err != nil {
		return 0, fmt.Errorf("%w: Maven repository %s: %v", ErrPrerequisite, src, err)
	}
	if !info.IsDir() {
		return 0, fmt.Errorf("%w: Maven repository %s is not a directory", ErrPrerequisite, src)
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return 0, fmt.Errorf("creating the Maven mirror: %w", err)
	}
	n := 0
	// chain guards against directory symlink cycles: a real directory is
	// mirrored at most once along one path of links.
	var mirror func(srcDir, dstDir string, chain map[string]bool) error
	mirror = func(srcDir, dstDir string, chain map[string]bool) error {
		real, err := filepath.EvalSymlinks(srcDir)
		if err != nil {
			return fmt.Errorf("resolving %s: %w", srcDir, err)
		}
		if chain[real] {
			return nil // a symlink cycle: mirroring it again would never end
		}
		chain[real] = true
		defer delete(chain, real)
		entries, err := os.ReadDir(srcDir)
		if err != nil {
			return fmt.Errorf("reading %s: %w", srcDir, err)
		}
		for _, e := range entries {
			s, d := filepath.Join(srcDir, e.Name()), filepath.Join(dstDir, e.Name())
			st, err := os.Stat(s) // follows symlinks
			if err != nil {
				continue // a dangling link in the source: nothing to mirror
			}
			switch {
			case st.IsDir():
				if err := os.Mkdir(d, 0o755); err != nil {
					return fmt.Errorf("creating %s: %w", d, err)
				}
				if err := mirror(s, d, chain); err != nil {
					return err
				}
			case st.Mode().IsRegular():
				if err := os.Symlink(s, d); err != nil {
					return fmt.Errorf("linking %s: %w", d, err)
				}
				n++
			}
		}
		return nil
	}
	if err := mirror(src, dst, map[string]bool{}); err != nil {
		return n, err
	}
	return n, nil
}

// checkMirror reports the first directory symlink or non-link file in dst;
// nil means dst is a per-file mirror.
func checkMirror(dst string) error {
	return filepath.WalkDir(dst, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil // a file Maven wrote itself
		}
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("dangling link %s: %w", path, err)
		}
		if st.IsDir() {
			return fmt.Errorf("directory symlink in the Maven mirror: %s", path)
		}
		return nil
	})
}
