package lake

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// The lake removes only files it wrote: manifests (and their temporary
// files) under snapshots/ and Parquet data files under
// data/<partition>/b<bucket>/, named as the lake names them. Anything
// else found in a table's directory stays, with the directories on its
// path, and is logged.

// TableIDs lists the tables that have a directory in the lake, ascending.
// Entries that are no table id written by the lake are not listed.
func (l *Lake) TableIDs() ([]int64, error) {
	if err := l.checkOpen(); err != nil {
		return nil, err
	}
	names, err := l.fs.ReadDir(l.root)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lake: list tables: %w", err)
	}
	var out []int64
	for _, n := range names {
		if id, ok := parseTableDir(n); ok && l.isDir(n) {
			out = append(out, id)
		}
	}
	return out, nil
}

// parseTableDir reads a table directory's name, as tableDir writes it.
func parseTableDir(name string) (int64, bool) {
	id, err := strconv.ParseInt(name, 10, 64)
	if err != nil || id < 0 || tableDir(id) != name {
		return 0, false
	}
	return id, true
}

// isDir reports whether rel is a directory with something in it.
func (l *Lake) isDir(rel string) bool {
	_, err := l.fs.ReadDir(l.abs(rel))
	return err == nil
}

// isManifestFile reports whether name is a manifest, the file list or the
// temporary file of one.
func isManifestFile(name string) bool {
	base, _ := strings.CutSuffix(name, ".tmp")
	if base == FileListName {
		return true
	}
	id, err := strconv.ParseInt(strings.TrimSuffix(base, ".json"), 10, 64)
	return err == nil && id >= 0 && manifestName(id) == base
}

// isDataFile reports whether name is a data file as NewFileWriter names
// it.
func isDataFile(name string) bool {
	s, n, undo, ok := parseFileName(name)
	if undo {
		return ok && undoFileName(s, n) == name
	}
	return ok && dataFileName(s, n) == name
}

// isBucketDir reports whether name is a b<bucket> directory name.
func isBucketDir(name string) bool {
	rest, ok := strings.CutPrefix(name, "b")
	b, err := strconv.Atoi(rest)
	return ok && err == nil && b >= 0 && strconv.Itoa(b) == rest
}

// removeTableFiles removes the files the lake wrote for a table and the
// directories that are empty then; it reports whether it kept anything.
func (l *Lake) removeTableFiles(tableID int64) (kept bool, err error) {
	root := tableDir(tableID)
	names, err := l.fs.ReadDir(l.abs(root))
	if isNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("list %s: %w", root, err)
	}
	for _, n := range names {
		rel := path.Join(root, n)
		var k bool
		switch {
		case n == "snapshots" && l.isDir(rel):
			k, err = l.removeFiles(rel, isManifestFile)
		case n == "data" && l.isDir(rel):
			k, err = l.removeData(rel)
		default:
			l.keep(rel)
			k = true
		}
		if err != nil {
			return false, err
		}
		kept = kept || k
	}
	return kept, l.removeDirIf(root, !kept)
}

// removeData removes the data files under a table's data/ directory.
func (l *Lake) removeData(dataRel string) (kept bool, err error) {
	parts, err := l.fs.ReadDir(l.abs(dataRel))
	if err != nil && !isNotExist(err) {
		return false, fmt.Errorf("list %s: %w", dataRel, err)
	}
	for _, p := range parts {
		prel := path.Join(dataRel, p)
		if !l.isDir(prel) {
			l.keep(prel)
			kept = true
			continue
		}
		buckets, err := l.fs.ReadDir(l.abs(prel))
		if err != nil {
			return false, fmt.Errorf("list %s: %w", prel, err)
		}
		pkept := false
		for _, b := range buckets {
			brel := path.Join(prel, b)
			if !isBucketDir(b) || !l.isDir(brel) {
				l.keep(brel)
				pkept = true
				continue
			}
			k, err := l.removeFiles(brel, isDataFile)
			if err != nil {
				return false, err
			}
			pkept = pkept || k
		}
		if err := l.removeDirIf(prel, !pkept); err != nil {
			return false, err
		}
		kept = kept || pkept
	}
	return kept, l.removeDirIf(dataRel, !kept)
}

// removeFiles removes the files of dir that own accepts, and dir when
// nothing else is in it.
func (l *Lake) removeFiles(dir string, own func(string) bool) (kept bool, err error) {
	names, err := l.fs.ReadDir(l.abs(dir))
	if err != nil && !isNotExist(err) {
		return false, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, n := range names {
		rel := path.Join(dir, n)
		if !own(n) || l.isDir(rel) {
			l.keep(rel)
			kept = true
			continue
		}
		if err := l.fs.Remove(l.abs(rel)); err != nil && !isNotExist(err) {
			return false, fmt.Errorf("remove %s: %w", rel, err)
		}
	}
	return kept, l.removeDirIf(dir, !kept)
}

// removeDirIf removes the directory rel when empty is true. Directories
// of an in-memory lake exist only through their files, so there is
// nothing to remove then.
func (l *Lake) removeDirIf(rel string, empty bool) error {
	if !empty {
		return nil
	}
	if err := l.fs.Remove(l.abs(rel)); err != nil && !isNotExist(err) {
		return fmt.Errorf("remove %s: %w", rel, err)
	}
	return nil
}

func (l *Lake) keep(rel string) {
	l.opts.Logger.Warn("lake: keeping an entry the lake did not write", "entry", rel)
}
