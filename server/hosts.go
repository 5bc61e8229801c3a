package server

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

// A web page whose domain name is rebound to this machine's address can
// read the API from a user's browser: its requests carry that domain as
// their Host. The server answers only requests that name it: by the host
// it listens on, a localhost name or a loopback address and, when it
// listens on every interface, any IP address or this machine's name.

// EveryInterface reports whether listen (host:port) binds every interface.
func EveryInterface(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// hostCheck refuses with 421 every request whose Host header does not
// name the server listening on listen.
func hostCheck(listen string, next http.Handler) http.Handler {
	names := map[string]bool{"localhost": true}
	host, _, err := net.SplitHostPort(listen)
	if err == nil && host != "" {
		names[strings.ToLower(host)] = true
	}
	every := EveryInterface(listen)
	if every {
		if name, err := os.Hostname(); err == nil {
			names[strings.ToLower(name)] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Host
		if hh, _, err := net.SplitHostPort(h); err == nil {
			h = hh
		}
		h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
		ip := net.ParseIP(h)
		switch {
		case names[h], strings.HasSuffix(h, ".localhost"),
			ip != nil && (ip.IsLoopback() || every):
			next.ServeHTTP(w, r)
		default:
			writeJSON(w, http.StatusMisdirectedRequest, Error{Error: fmt.Sprintf("host %q is not this server's name; use the address it listens on (%s) or localhost", r.Host, listen), Param: "Host"})
		}
	})
}
