package config

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/record"
)

// defaultServerStartTimeout is how long a benchmark's server may take to
// answer its ready_url unless start_timeout says otherwise.
const defaultServerStartTimeout = 10 * time.Minute

// server reads a benchmark step's server:
//
//	server:
//	  run: python -m sglang.launch_server --port 30000 ...
//	  env: {NCCL_DEBUG: INFO}
//	  ready_url: http://127.0.0.1:30000/health
//	  start_timeout: 15m
//	  log: 1MiB          # the server log kept with the run (default 64KiB)
//
// It takes the step's fields, not the node, so that this file names no
// YAML library.
func (d *decoder) server(step map[string]field, p string) *record.Server {
	n := value(step, "server")
	if isNull(resolve(n)) {
		return nil
	}
	f := d.mapping(n, p, "run", "env", "ready_url", "start_timeout", "log")
	s := &record.Server{
		Run:          d.str(value(f, "run"), p+".run"),
		Env:          d.env(value(f, "env"), p+".env"),
		ReadyURL:     d.str(value(f, "ready_url"), p+".ready_url"),
		StartTimeout: defaultServerStartTimeout,
	}
	if strings.TrimSpace(s.Run) == "" {
		d.errorf(at(f["run"].key, n), p+".run", "missing: the shell command that starts the server")
	}
	if s.ReadyURL == "" {
		d.errorf(at(f["ready_url"].key, n), p+".ready_url", "missing: an http:// URL that answers 200 once the server is ready")
	} else if u, err := url.Parse(s.ReadyURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.errorf(value(f, "ready_url"), p+".ready_url", "bad URL %q (want http://HOST:PORT/PATH)", s.ReadyURL)
	}
	if v := value(f, "start_timeout"); v != nil {
		s.StartTimeout = d.duration(v, p+".start_timeout")
	}
	if v := value(f, "log"); v != nil {
		text := d.str(v, p+".log")
		if s.LogCap = parseSize(text); s.LogCap == 0 {
			d.errorf(v, p+".log", "bad size %q (want bytes, KiB or MiB, at most 64MiB)", text)
		}
	}
	return s
}

// parseSize reads a byte count written as a number or with KiB or MiB,
// at most 64 MiB; 0 when it is none.
func parseSize(text string) int {
	s := strings.TrimSpace(text)
	mult := 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 || v > (64<<20)/mult {
		return 0
	}
	return v * mult
}
