// Package config is Outflow's one typed configuration, read once from the environment in cmd/ and passed
// down explicitly. Nothing else in the code base reads environment variables.
//
// Every variable carries the OUTFLOW_ prefix except DATABASE_URL, which keeps its conventional name. Defaults
// make `make run` work on a fresh machine; values that cannot be defaulted safely (the secret key) fail
// start-up with a message that says how to set them.
package config

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is the validated configuration of one outflow process.
type Config struct {
	// DatabaseURL is the Postgres connection string of the schema owner; the process switches to the
	// outflow_app role for application queries. Env: DATABASE_URL.
	DatabaseURL string
	// HTTPAddr is the listen address of the API. Env: OUTFLOW_HTTP_ADDR, default 127.0.0.1:8080.
	HTTPAddr string
	// SecretKey signs cursors and other server-issued tokens; at least 32 bytes, given as base64 or hex.
	// Env: OUTFLOW_SECRET_KEY. Required by `serve`.
	SecretKey []byte
	// LogLevel is the minimum level written to the JSON log. Env: OUTFLOW_LOG_LEVEL (debug|info|warn|error).
	LogLevel slog.Level
	// MaxBodyBytes caps every request body. Env: OUTFLOW_MAX_BODY_BYTES, default 10 MiB.
	MaxBodyBytes int64
	// ShutdownTimeout bounds how long in-flight requests and jobs get to finish on SIGTERM.
	// Env: OUTFLOW_SHUTDOWN_TIMEOUT, default 20s.
	ShutdownTimeout time.Duration
	// DBMaxConns is the size of the connection pool. Env: OUTFLOW_DB_MAX_CONNS, default 20.
	DBMaxConns int32
	// JobWorkers is the number of jobs a worker process runs at once. Env: OUTFLOW_JOB_WORKERS, default 50.
	JobWorkers int
}

// Load reads and validates the configuration through getenv (os.Getenv in production, a map in tests). It
// reports every problem at once, one per line, each naming its variable.
func Load(getenv func(string) string) (Config, error) {
	var errs []error
	c := Config{
		DatabaseURL: strings.TrimSpace(getenv("DATABASE_URL")),
		HTTPAddr:    cmp.Or(strings.TrimSpace(getenv("OUTFLOW_HTTP_ADDR")), "127.0.0.1:8080"),
	}

	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL is required: a postgres:// URL of the schema owner (`make run` starts a local cluster and sets it)"))
	} else if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		errs = append(errs, errors.New("DATABASE_URL must be a postgres:// or postgresql:// URL"))
	}
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		errs = append(errs, fmt.Errorf("OUTFLOW_HTTP_ADDR %q must be host:port (for example 127.0.0.1:8080)", c.HTTPAddr))
	}

	if raw := strings.TrimSpace(getenv("OUTFLOW_SECRET_KEY")); raw != "" {
		key, err := decodeKey(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("OUTFLOW_SECRET_KEY %s", err))
		}
		c.SecretKey = key
	}

	level := cmp.Or(strings.ToLower(strings.TrimSpace(getenv("OUTFLOW_LOG_LEVEL"))), "info")
	if err := c.LogLevel.UnmarshalText([]byte(level)); err != nil {
		errs = append(errs, fmt.Errorf("OUTFLOW_LOG_LEVEL %q must be one of debug, info, warn, error", level))
	}

	var err error
	if c.MaxBodyBytes, err = intVar(getenv, "OUTFLOW_MAX_BODY_BYTES", 10<<20, 1<<10, 1<<30); err != nil {
		errs = append(errs, err)
	}
	conns, err := intVar(getenv, "OUTFLOW_DB_MAX_CONNS", 20, 4, 1000)
	if err != nil {
		errs = append(errs, err)
	}
	c.DBMaxConns = int32(conns)
	workers, err := intVar(getenv, "OUTFLOW_JOB_WORKERS", 50, 1, 10000)
	if err != nil {
		errs = append(errs, err)
	}
	c.JobWorkers = int(workers)

	c.ShutdownTimeout = 20 * time.Second
	if raw := strings.TrimSpace(getenv("OUTFLOW_SHUTDOWN_TIMEOUT")); raw != "" {
		d, err := time.ParseDuration(raw)
		if err != nil || d <= 0 || d > 10*time.Minute {
			errs = append(errs, fmt.Errorf("OUTFLOW_SHUTDOWN_TIMEOUT %q must be a duration between 1ms and 10m (for example 20s)", raw))
		} else {
			c.ShutdownTimeout = d
		}
	}

	if len(errs) > 0 {
		return Config{}, fmt.Errorf("invalid configuration:\n  %w", errors.Join(errs...))
	}
	return c, nil
}

// RequireSecretKey fails when no secret key is configured; commands that sign tokens call it.
func (c Config) RequireSecretKey() error {
	if len(c.SecretKey) == 0 {
		return errors.New("invalid configuration:\n  OUTFLOW_SECRET_KEY is required: 32 or more random bytes as base64 or hex (generate one with `openssl rand -base64 32`)")
	}
	return nil
}

// decodeKey accepts hex or (standard or URL-safe, padded or not) base64 and requires 32 bytes or more.
func decodeKey(raw string) ([]byte, error) {
	var key []byte
	if b, err := hex.DecodeString(raw); err == nil {
		key = b
	} else {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(raw); err == nil {
				key = b
				break
			}
		}
	}
	if key == nil {
		return nil, errors.New("must be base64 or hex")
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("must decode to at least 32 bytes (got %d)", len(key))
	}
	return key, nil
}

// intVar reads an optional integer variable within [lo, hi], returning def when it is unset.
func intVar(getenv func(string) string, name string, def, lo, hi int64) (int64, error) {
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s %q must be an integer between %d and %d", name, raw, lo, hi)
	}
	return n, nil
}
