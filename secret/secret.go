// Package secret finds credentials so that perfbot neither stores nor
// publishes them. It knows a secret three ways: by the name of the variable
// that holds it (HF_TOKEN, DB_PASSWORD, DATABASE_URL, DB_CRED), by its
// shape in any text (the password of a URL, a GitHub or Hugging Face
// token, a Slack webhook, the value of a JSON key or key=value named like
// a secret), and by value, when the caller says which values are secret.
//
// Redact is for one environment variable about to be recorded; Scrub is for
// free text about to be shown (logs, an issue body). Both replace what they
// find with Mask and leave the rest as it was, so that a redacted GOPROXY
// still shows its host.
//
// The shapes are a list of known formats, not a proof: a password printed
// on its own in a log is found only when the caller passes it to Scrub.
// This package imports nothing from perfbot, so that every package that
// records or prints text can use it.
package secret

import (
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Mask replaces a secret.
const Mask = "REDACTED"

// MinLength is the shortest value Scrub searches for: a shorter one ("1",
// "on") would match ordinary text everywhere. Such values are still
// redacted by the name of their variable.
const MinLength = 6

// IsSecretName reports whether a variable's name says that its value is a
// secret. The name is read as words split at '_', '-' and '.', in any case:
// a word PASS, PASSWD, PWD, AUTH, DSN, CREDS or WEBHOOK, or a word ending in
// TOKEN, KEY, SECRET, PASSWORD, CRED, CREDENTIAL or AUTH (HF_TOKEN, APIKEY,
// PGPASSWORD, OAUTH, DB_CRED), or DATABASE_URL. Words are matched whole so that
// TOKENIZERS_PARALLELISM and KEYBOARD stay readable; PWD and OLDPWD are the
// shell's working directories.
func IsSecretName(name string) bool {
	upper := strings.ToUpper(name)
	switch upper {
	case "PWD", "OLDPWD":
		return false
	case "DATABASE_URL":
		return true
	}
	for _, w := range strings.FieldsFunc(upper, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch w {
		case "PASS", "PASSWD", "PWD", "AUTH", "DSN", "CREDS", "WEBHOOK", "WEBHOOKS":
			return true
		}
		if strings.Contains(w, "PASSWORD") || strings.Contains(w, "SECRET") || strings.Contains(w, "WEBHOOK") {
			return true
		}
		for _, suffix := range []string{"TOKEN", "TOKENS", "KEY", "KEYS", "CRED", "CREDENTIAL", "CREDENTIALS", "AUTH"} {
			if strings.HasSuffix(w, suffix) {
				return true
			}
		}
	}
	return false
}

// Redact returns what may be recorded of the variable name's value: Mask
// for a secret name (an empty value stays empty) and for a value that
// holds a credential whatever the variable is called (a JSON or key=value
// setting whose key is a secret name, as in
// APP_SETTINGS={"db":{"password":"…"}}), otherwise the value with every
// secret shape in it masked (see Scrub).
func Redact(name, value string) string {
	if IsSecretName(name) || len(held(value)) > 0 {
		if value == "" {
			return ""
		}
		return Mask
	}
	return Scrub(value, nil)
}

// held returns the credentials inside value: the values of its keys that
// are secret names (JSON "key": "value" or key=value). The password of a
// URL is not among them: Scrub masks it and keeps the rest of the URL.
func held(value string) []string {
	var found []string
	for _, m := range quotedPair.FindAllStringSubmatch(value, -1) {
		if v := unquote(m[2]); v != "" && IsSecretName(m[1]) {
			found = append(found, v)
		}
	}
	for _, m := range assignment.FindAllStringSubmatch(value, -1) {
		if v := strings.Trim(m[3], `"'`); IsSecretName(m[2]) && !isPlainSetting(v) {
			found = append(found, v)
		}
	}
	return found
}

// passwords returns the passwords of the URLs in value.
func passwords(value string) []string {
	var found []string
	for _, m := range userinfo.FindAllString(value, -1) {
		info := strings.TrimSuffix(m[strings.Index(m, "://")+len("://"):], "@")
		if _, pw, ok := strings.Cut(info, ":"); ok && pw != "" {
			found = append(found, pw)
		}
	}
	return found
}

// isPlainSetting reports whether v, the value of a key named like a
// secret, is a number or a boolean: max_new_tokens=128, use_auth=true.
func isPlainSetting(v string) bool {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return true
	}
	switch strings.ToLower(v) {
	case "", "true", "false", "yes", "no", "on", "off", "none", "null":
		return true
	}
	return false
}

// unquote is a JSON string's value without its quotes, its escapes read
// where they can be.
func unquote(q string) string {
	if v, err := strconv.Unquote(q); err == nil {
		return v
	}
	return strings.Trim(q, `"`)
}

// FromEnv returns the values of the variables of environ ("NAME=value", as
// os.Environ gives them) whose names are secret names, and the credentials
// that any variable holds (see Redact) and the passwords of its URLs, each
// at least MinLength long: what a caller passes to Scrub, so that a
// benchmark that prints one alone is scrubbed too.
func FromEnv(environ []string) []string {
	var values []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if IsSecretName(name) {
			if len(value) >= MinLength {
				values = append(values, value)
			}
			continue
		}
		for _, v := range append(held(value), passwords(value)...) {
			if len(v) >= MinLength {
				values = append(values, v)
			}
		}
	}
	return values
}

// Scrub returns text with every occurrence of the values of secrets (and
// of their URL-encoded forms) masked, and every secret shape: the password
// of a URL (https://user:REDACTED@host) or a user name that is a token,
// secret query parameters (?token=, &X-Amz-Signature=), the path of a
// webhook URL (Slack, Discord, Teams, any /webhooks/ path), the credential
// of an Authorization header, a PEM private key, and the tokens of GitHub
// (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), Hugging Face (hf_), Slack
// (xoxb-, xoxp-, …), OpenAI-style keys (sk-), GitLab (glpat-), npm (npm_),
// PyPI (pypi-), AWS access key ids and Google API keys, and the value of
// a JSON string or a key=value whose key is a secret name ("password":
// "…", DB_PASSWORD=…; a number or boolean stays). Values shorter than
// MinLength are not searched for. Scrubbing scrubbed text changes nothing.
func Scrub(text string, secrets []string) string {
	text = scrubValues(text, secrets)
	text = quotedPair.ReplaceAllStringFunc(text, maskQuotedPair)
	text = assignment.ReplaceAllStringFunc(text, maskAssignment)
	text = privateKey.ReplaceAllString(text, Mask)
	text = authHeader.ReplaceAllString(text, "${1}"+Mask)
	text = webhook.ReplaceAllString(text, "${1}"+Mask)
	text = userinfo.ReplaceAllStringFunc(text, maskUserinfo)
	text = queryParam.ReplaceAllStringFunc(text, maskQueryParam)
	return token.ReplaceAllString(text, Mask)
}

// scrubValues masks the known values, the longest first so that a secret
// holding another is masked whole.
func scrubValues(text string, secrets []string) string {
	seen := map[string]bool{}
	var olds []string
	for _, s := range secrets {
		for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			// A value inside the mask would make a second Scrub mask the
			// mask; such a secret is too weak to hide anyway.
			if len(form) >= MinLength && !seen[form] && !strings.Contains(Mask, form) {
				seen[form] = true
				olds = append(olds, form)
			}
		}
	}
	if len(olds) == 0 {
		return text
	}
	sort.Slice(olds, func(i, j int) bool { return len(olds[i]) > len(olds[j]) })
	pairs := make([]string, 0, 2*len(olds))
	for _, o := range olds {
		pairs = append(pairs, o, Mask)
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

var (
	privateKey = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----`)
	authHeader = regexp.MustCompile(`(?i)(\bauthorization:\s*(?:bearer|basic|token)\s+)[^\s"']+`)
	webhook    = regexp.MustCompile(`(?i)(https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/|` +
		`(?:canary\.|ptb\.)?discord(?:app)?\.com/api/webhooks/|[a-z0-9.-]*\.webhook\.office\.com/|outlook\.office\.com/webhook/|` +
		`[^\s/"'<>]+/(?:[^\s"'<>?#]*/)?webhooks?/))[^\s"'<>]+`)
	// userinfo is a URL's scheme and user information: up to the last '@'
	// before the host, so that an unescaped '@' in a password is covered.
	userinfo = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s/?#,|"'<>]+@`)
	// queryParam is one name=value pair of a URL's query.
	// quotedPair is a JSON key and its string value.
	quotedPair = regexp.MustCompile(`"([A-Za-z0-9_.-]{1,64})"\s*:\s*("(?:[^"\\\n]|\\.)*")`)
	// assignment is key=value after the start, a space or a separator
	// (a query parameter is queryParam's).
	assignment = regexp.MustCompile(`(^|[\s,;{(])([A-Za-z_][A-Za-z0-9_.-]{0,63})=("[^"\n]*"|'[^'\n]*'|[^\s,;&}"')]+)`)
	queryParam = regexp.MustCompile(`[?&;][A-Za-z0-9_.-]+=[^&#\s"'<>]*`)
	token      = regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|hf_[A-Za-z0-9]{30,}|` +
		`xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|glpat-[A-Za-z0-9_-]{20,}|` +
		`npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{50,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})`)
)

// tokenUserLength is the shortest user name taken for a token when a URL
// has no password (https://<token>@github.com): "git" and "alice" are
// names, forty random characters are not.
const tokenUserLength = 20

// maskUserinfo masks the password of "scheme://user:password@", or a user
// name that is a token.
func maskUserinfo(m string) string {
	i := strings.Index(m, "://") + len("://")
	scheme, info := m[:i], strings.TrimSuffix(m[i:], "@")
	if user, _, ok := strings.Cut(info, ":"); ok {
		return scheme + user + ":" + Mask + "@"
	}
	if len(info) >= tokenUserLength || token.MatchString(info) {
		return scheme + Mask + "@"
	}
	return m
}

// maskQuotedPair masks the string value of a JSON key that is a secret
// name.
func maskQuotedPair(m string) string {
	sub := quotedPair.FindStringSubmatch(m)
	if !IsSecretName(sub[1]) || unquote(sub[2]) == "" || unquote(sub[2]) == Mask {
		return m
	}
	return m[:len(m)-len(sub[2])] + `"` + Mask + `"`
}

// maskAssignment masks the value of key=value when the key is a secret
// name and the value not a number or a boolean.
func maskAssignment(m string) string {
	sub := assignment.FindStringSubmatch(m)
	if v := strings.Trim(sub[3], `"'`); !IsSecretName(sub[2]) || isPlainSetting(v) || v == Mask {
		return m
	}
	return sub[1] + sub[2] + "=" + Mask
}

// maskQueryParam masks the value of a query parameter with a secret name
// or a signature's (presigned S3 and Azure SAS URLs).
func maskQueryParam(m string) string {
	name, value, _ := strings.Cut(m[1:], "=")
	if value == "" {
		return m
	}
	switch strings.ToLower(name) {
	case "sig", "signature", "x-amz-signature", "x-goog-signature", "code", "access_token":
		return m[:1] + name + "=" + Mask
	}
	if IsSecretName(name) {
		return m[:1] + name + "=" + Mask
	}
	return m
}

// IsLoopback reports whether host (a URL's host name, without its port)
// names this machine: localhost or a loopback address. It is the only host
// a secret may be sent to over plain http.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
