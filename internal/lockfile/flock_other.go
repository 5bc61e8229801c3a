//go:build !unix

package lockfile

import "os"

func tryLock(*os.File) (bool, error) { return false, ErrUnsupported }

func unlock(*os.File) {}

func lockBlocking(*os.File) error { return ErrUnsupported }
