package results

import "strings"

// RedactURL returns raw with the userinfo of its authority ("user:pass@")
// replaced by "redacted@", so a credential given in a URL is never written
// to a file or a log, as the API key never is. raw may lack the scheme
// ("user:pass@host:8000", as --url allows); a URL without userinfo is
// returned unchanged.
func RedactURL(raw string) string {
	prefix, rest := "", raw
	if i := strings.Index(raw, "://"); i >= 0 {
		prefix, rest = raw[:i+3], raw[i+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw
	}
	return prefix + "redacted@" + rest[at+1:]
}
