package storage

import (
	"io"
	"io/fs"
	"os"
)

// DiskFS is the operating system's file system.
func DiskFS() FS { return diskFS{} }

type diskFS struct{}

func (diskFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (diskFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }
func (diskFS) Remove(name string) error                     { return os.Remove(name) }
func (diskFS) RemoveAll(name string) error                  { return os.RemoveAll(name) }
func (diskFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (diskFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (diskFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }

func (diskFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (diskFS) Lock(name string) (io.Closer, error) { return lockFile(name) }
