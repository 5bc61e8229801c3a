package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/perfbot/perfbot/demo"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/views"
)

// demoDashboard writes the static dashboard of the demo's store under
// dir/dashboard and, with serve, serves the live one over the same store
// (read-only: no token, so every change is refused) until ctx is done.
func demoDashboard(ctx context.Context, g *globals, dir string, serve bool, listen string) error {
	cfg, err := demo.Config(filepath.Join(dir, "origin.git"))
	if err != nil {
		return err
	}
	db, err := store.Open(cfg.Store)
	if err != nil {
		return err
	}
	defer db.Close()
	v := views.New(cfg, db)
	files, err := server.WriteStatic(ctx, v, filepath.Join(dir, "dashboard"))
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stderr, "dashboard: %s (%d pages)\n", files[0], len(files))
	if !serve {
		return nil
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return usagef("--listen %s: %v", listen, err)
	}
	limited := server.Limit(ln, server.ConnLimit())
	srv := limited.Server(server.New(v, nil, server.Options{Listen: listen}))
	fmt.Fprintf(g.stderr, "serving the demo's dashboard on http://%s until interrupted\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(limited) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return err
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
