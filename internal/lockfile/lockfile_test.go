package lockfile

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAcquire(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, path string)
	}{
		{
			name: "a held lock fails fast naming its holder",
			run: func(t *testing.T, path string) {
				l, err := Acquire(context.Background(), path, 0, nil)
				require.NoError(t, err)
				defer l.Release()
				var seen Holder
				_, err = Acquire(context.Background(), path, 50*time.Millisecond, func(h Holder) { seen = h })
				var held *HeldError
				require.ErrorAs(t, err, &held)
				assert.Equal(t, os.Getpid(), held.Holder.PID)
				assert.Equal(t, held.Holder, seen, "the waiter is told whom it waits for")
				assert.Contains(t, err.Error(), "is held by pid")
				assert.GreaterOrEqual(t, held.Waited, 50*time.Millisecond)
			},
		},
		{
			name: "a waiter gets the lock once it is released",
			run: func(t *testing.T, path string) {
				l, err := Acquire(context.Background(), path, 0, nil)
				require.NoError(t, err)
				time.AfterFunc(50*time.Millisecond, l.Release)
				again, err := Acquire(context.Background(), path, 10*time.Second, nil)
				require.NoError(t, err)
				again.Release()
				again.Release()
			},
		},
		{
			name: "a waiter gets the lock before its holder can take it again",
			run: func(t *testing.T, path string) {
				l, err := Acquire(context.Background(), path, 0, nil)
				require.NoError(t, err)
				waiting := make(chan struct{})
				got := make(chan *Lock)
				go func() {
					w, err := Acquire(context.Background(), path, 10*time.Second, func(Holder) { close(waiting) })
					assert.NoError(t, err)
					got <- w
				}()
				<-waiting
				time.Sleep(20 * time.Millisecond) // the waiter is blocked in flock
				l.Release()
				time.Sleep(5 * time.Millisecond) // the holder's next measurement
				_, err = Acquire(context.Background(), path, 0, nil)
				var held *HeldError
				assert.ErrorAs(t, err, &held, "the waiter holds it")
				(<-got).Release()
			},
		},
		{
			name: "a cancelled wait returns the context's error",
			run: func(t *testing.T, path string) {
				l, err := Acquire(context.Background(), path, 0, nil)
				require.NoError(t, err)
				defer l.Release()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
				defer cancel()
				_, err = Acquire(ctx, path, time.Hour, nil)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			},
		},
		{
			name: "the file names the current holder",
			run: func(t *testing.T, path string) {
				l, err := Acquire(context.Background(), path, 0, nil)
				require.NoError(t, err)
				defer l.Release()
				h := readHolder(path)
				assert.Equal(t, os.Getpid(), h.PID)
				assert.NotEmpty(t, h.Command)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, filepath.Join(t.TempDir(), "lock"))
		})
	}
}
