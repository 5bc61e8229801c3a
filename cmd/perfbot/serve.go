package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/views"
)

func serveCmd(g *globals) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the service: the cron schedule, the job queue and the HTTP API",
		Long: `serve runs perfbot as a service until SIGTERM or SIGINT: the configured cron
schedule (schedule:) queues a nightly cycle, one worker runs the queue's
jobs (alerts, and jobs submitted through the API), and the JSON API is
served on serve.listen (127.0.0.1:8080 by default).

While it runs it holds the store; the other commands on the same store go
through it: history, findings and report read through the API, triage
records through it, bisect submits a job and follows its trace. On
SIGTERM the run under way finishes and is recorded, and the interrupted
job resumes on the next start.`,
		Example: `  perfbot serve
  PERFBOT_API_TOKEN=secret perfbot serve --listen 127.0.0.1:9090`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			if listen == "" {
				listen = cfg.Serve.Listen
			}
			bot, err := g.openConfig(ctx, cfg)
			if err != nil {
				return err
			}
			defer bot.Close()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return usagef("--listen %s: %v", listen, err)
			}
			session, err := newToken()
			if err != nil {
				return err
			}
			wake := make(chan struct{}, 1)
			tokens := []string{session}
			if t := os.Getenv(cfg.Serve.TokenEnv); t != "" {
				tokens = append(tokens, t)
			}
			read := views.New(cfg, bot.Store)
			read.HostStates = bot.Oracle.HostStates
			if w := listenWarning(listen); w != "" {
				fmt.Fprintln(g.stderr, w)
			}
			api := server.New(read, bot, server.Options{Tokens: tokens, Listen: listen, Enqueued: func() {
				select {
				case wake <- struct{}{}:
				default:
				}
			}})
			limited := server.Limit(ln, server.ConnLimit())
			srv := limited.Server(api)
			url := "http://" + ln.Addr().String()
			path := endpointPath(bot.Store.Path())
			if err := writeEndpoint(path, endpoint{URL: url, PID: os.Getpid(), Token: session}); err != nil {
				return err
			}
			defer os.Remove(path)
			fmt.Fprintf(g.stderr, "serving %s on %s (store %s)\n", cfg.Repo.URL, url, bot.Store.Path())
			httpDone := make(chan error, 1)
			go func() { httpDone <- srv.Serve(limited) }()
			serveErr := bot.Serve(ctx, service.ServeOptions{Wake: wake})
			shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shut)
			if err := <-httpDone; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			fmt.Fprintln(g.stderr, "stopped")
			return serveErr
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to serve the API on (default: serve.listen, 127.0.0.1:8080)")
	return cmd
}

// listenWarning warns when the API, whose GET requests need no token, is
// served on every interface of the machine; "" when it is not.
func listenWarning(listen string) string {
	if !server.EveryInterface(listen) {
		return ""
	}
	return fmt.Sprintf("warning: serve.listen %s binds every interface and GET needs no token: whoever reaches this machine reads the history, jobs and findings; listen on 127.0.0.1 (or a private address) behind a proxy that authenticates", listen)
}

// endpoint is what a running server tells the commands beside it, in a
// file next to the store that only its user can read: where it listens,
// and the token of this session that lets them submit jobs.
type endpoint struct {
	URL   string `json:"url"`
	PID   int    `json:"pid"`
	Token string `json:"token"`
}

func endpointPath(storePath string) string { return service.EndpointPath(storePath) }

func writeEndpoint(path string, e endpoint) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

func readEndpoint(path string) (endpoint, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return endpoint{}, false
	}
	var e endpoint
	if json.Unmarshal(data, &e) != nil || e.URL == "" {
		return endpoint{}, false
	}
	return e, true
}

func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
