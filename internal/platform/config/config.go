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
	// PreviousSecretKeys keep values sealed before a secret key rotation readable.
	// Env: OUTFLOW_SECRET_KEY_PREVIOUS, comma-separated, same encoding as OUTFLOW_SECRET_KEY.
	PreviousSecretKeys [][]byte

	// PublicURL is where clients reach this API (OAuth and sign-in callbacks are built from it).
	// Env: OUTFLOW_PUBLIC_URL, default http://<OUTFLOW_HTTP_ADDR>.
	PublicURL string
	// AppURL is the web app browsers are sent back to after a browser sign-in. Env: OUTFLOW_APP_URL, default PublicURL.
	AppURL string

	// SMTPURL is the relay for system mail (codes, resets, invitations, alerts): smtp://user:pass@host:587 uses
	// STARTTLS, smtps://user:pass@host:465 implicit TLS. Empty logs each message at WARN instead.
	// Env: OUTFLOW_SMTP_URL.
	SMTPURL string
	// MailFrom is the sender of system mail. Env: OUTFLOW_MAIL_FROM, default "Outflow <no-reply@localhost>".
	MailFrom string

	// Captcha is the anti-bot check on sign-in starts: "off" or "turnstile". Env: OUTFLOW_CAPTCHA, default off.
	Captcha string
	// TurnstileSecret and TurnstileSiteKey configure the Turnstile-compatible verifier; TurnstileVerifyURL is its
	// site-verify endpoint. Env: OUTFLOW_TURNSTILE_SECRET, OUTFLOW_TURNSTILE_SITE_KEY, OUTFLOW_TURNSTILE_VERIFY_URL.
	TurnstileSecret    string
	TurnstileSiteKey   string
	TurnstileVerifyURL string

	// RequireEmailVerification makes registration send a code first; off returns the sign-in result at once.
	// Env: OUTFLOW_REQUIRE_EMAIL_VERIFICATION, default true.
	RequireEmailVerification bool
	// AvatarDir is where uploaded avatars are stored. Env: OUTFLOW_AVATAR_DIR, default .data/avatars.
	AvatarDir string
	// EdgeLocation trusts the edge's location headers (CF-IPCountry, CF-IPCity, CF-Region) for the coarse
	// location of sessions. Turn it on only behind an edge that sets them and strips client copies.
	// Env: OUTFLOW_EDGE_LOCATION, default false.
	EdgeLocation bool
	// WebhooksAllowPrivate lets webhook endpoints (and every other tenant-chosen URL the server calls) use
	// private, loopback and link-local addresses, IP literals, plain http and any port: for self-hosted test rigs
	// whose receivers live on a private network. Never on a shared deployment: it opens the server's own network
	// to its tenants (SSRF). Cloud metadata addresses stay refused. Env: OUTFLOW_WEBHOOKS_ALLOW_PRIVATE, default false.
	WebhooksAllowPrivate bool

	// DNSServer is the DNS server (host:port) the built-in email verifier sends its MX and address lookups to;
	// empty uses the system resolver. Env: OUTFLOW_DNS_SERVER.
	DNSServer string
	// VerifySMTPProbe makes the built-in email verifier ask each address's mail server whether the mailbox
	// exists (EHLO, MAIL FROM, RCPT TO, never DATA). Off, a verdict rests on syntax, lists and DNS only. Off by
	// default: most hosting networks block outbound port 25. Env: OUTFLOW_VERIFY_SMTP_PROBE, default false.
	VerifySMTPProbe bool
	// VerifyProbeFrom is the probe's MAIL FROM address, a real mailbox of a reputable domain; required when the
	// probe is on. Env: OUTFLOW_VERIFY_PROBE_FROM.
	VerifyProbeFrom string
	// VerifyHeloName is the probe's EHLO name; it should resolve to this host. Env: OUTFLOW_VERIFY_HELO_NAME,
	// default the domain of OUTFLOW_VERIFY_PROBE_FROM.
	VerifyHeloName string
	// VerifySMTPPort is the port the probe connects to on mail servers. Env: OUTFLOW_VERIFY_SMTP_PORT, default 25
	// (another value only makes sense against test servers).
	VerifySMTPPort int

	// AllowInsecureMail lets mailboxes reach private and loopback mail servers, and connect without TLS
	// (security none) to a loopback host: for self-hosted rigs whose mail server runs beside Outflow. Never on a
	// shared deployment: it opens the server's own network to its tenants. Env: OUTFLOW_ALLOW_INSECURE_MAIL,
	// default false.
	AllowInsecureMail bool
	// MailCAFile names a PEM file of extra certificate authorities trusted for mailbox SMTP and IMAP servers
	// (a private relay with an in-house CA); the system roots stay trusted. Env: OUTFLOW_MAIL_CA_FILE.
	MailCAFile string
	// TrackingHost is the deployment's tracking host name, the CNAME target of mailboxes' custom tracking
	// domains; empty means none can verify. Env: OUTFLOW_TRACKING_HOST.
	TrackingHost string
	// GeoIPDB names the MaxMind DB file (GeoLite2 or GeoIP2 Country or City) the tracking endpoints resolve
	// readers' countries with; empty means every country is unknown. A file that does not open, or holds no
	// countries, fails start. Env: OUTFLOW_GEOIP_DB.
	GeoIPDB string
	// Edition is how features are granted: "self_hosted" (every organization has every feature; the default)
	// or "hosted" (the unified inbox needs an active trial or a paid plan: an organization whose trial ended
	// gets 403). Env: OUTFLOW_EDITION.
	Edition string
	// DomainAuthGrace is how long a mailbox domain may fail authentication (SPF or DMARC missing) before its
	// mailboxes stop cold sending and warmup. Env: OUTFLOW_DOMAIN_AUTH_GRACE, default 72h (0 to 90 days).
	DomainAuthGrace time.Duration
	// MaxMailboxes is each organization's mailbox allowance; connecting one more answers 403
	// mailbox_allowance_reached. Env: OUTFLOW_MAX_MAILBOXES, default 100 (1 to 100000).
	MaxMailboxes int
	// DailyCampaigns is how many campaigns an organization may create (or duplicate) per UTC day; one more
	// answers 429 campaign_daily_limit. Env: OUTFLOW_DAILY_CAMPAIGNS, default 100 (1 to 100000).
	DailyCampaigns int
	// OpenMachineWindow, ClickMachineWindow, ClickBurstWindow and ProbableScannerWindow are the windows that
	// judge tracked opens and clicks human or machine (tracking.Windows, whose Validate the process runs at
	// start, so a window out of its range fails start). An open within OpenMachineWindow of dispatch and a
	// click within ClickMachineWindow are machines'; two clicks of one source on different links of one message
	// within ClickBurstWindow are a burst (a human click's effects wait that long plus a second); a probable
	// scanner network is a machine within ProbableScannerWindow. Env: OUTFLOW_OPEN_MACHINE_WINDOW (default 60s,
	// 1s to 900s), OUTFLOW_CLICK_MACHINE_WINDOW (default 30s, 1s to 900s), OUTFLOW_CLICK_BURST_WINDOW (default
	// 10s, 1s to 60s), OUTFLOW_PROBABLE_SCANNER_WINDOW (default 300s, up to 3600s and wider than both machine
	// windows).
	OpenMachineWindow     time.Duration
	ClickMachineWindow    time.Duration
	ClickBurstWindow      time.Duration
	ProbableScannerWindow time.Duration
	// TestRunWait is how long each wait of a campaign test run lasts (a follow-up's days, a wait step's
	// minutes); 0 keeps the campaigns' documented default of a few seconds. Env: OUTFLOW_TEST_RUN_WAIT, a
	// duration from 0s to 1h.
	TestRunWait time.Duration

	// Google, Apple and OIDC configure social sign-in; a provider with no client id is disabled.
	Google ProviderConfig
	Apple  ProviderConfig
	OIDC   ProviderConfig

	// MailboxGoogle and MailboxMicrosoft configure the consent flows that connect gmail and outlook
	// mailboxes; a provider with no client id is disabled (cli-start answers 503 for it).
	MailboxGoogle    MailboxOAuthConfig
	MailboxMicrosoft MailboxOAuthConfig
}

// MailboxOAuthConfig is one mail provider's OAuth registration and endpoints. Every endpoint has the
// provider's real value as its default and can be pointed elsewhere (a test's in-process authorization and
// mail servers, a sovereign cloud).
type MailboxOAuthConfig struct {
	// ClientID and ClientSecret are the app registered with the provider.
	// Env: OUTFLOW_MAILBOX_<P>_CLIENT_ID, OUTFLOW_MAILBOX_<P>_CLIENT_SECRET (P is GOOGLE or MICROSOFT).
	ClientID     string
	ClientSecret string
	// AuthURL and TokenURL are the provider's authorization and token endpoints.
	// Env: OUTFLOW_MAILBOX_<P>_AUTH_URL, OUTFLOW_MAILBOX_<P>_TOKEN_URL.
	AuthURL  string
	TokenURL string
	// APIURL is the base of the provider's mail settings API, read for send-as identities (Google only).
	// Env: OUTFLOW_MAILBOX_GOOGLE_API_URL, default https://gmail.googleapis.com.
	APIURL string
	// SMTP and IMAP are the provider's mail servers as host:port. Env: OUTFLOW_MAILBOX_<P>_SMTP, _IMAP.
	SMTP string
	IMAP string
}

// Enabled reports whether the provider is configured.
func (m MailboxOAuthConfig) Enabled() bool { return m.ClientID != "" }

// ProviderConfig is one identity provider for social sign-in.
type ProviderConfig struct {
	// Name is shown on the sign-in button (OIDC only). Env: OUTFLOW_OIDC_NAME.
	Name string
	// Issuer is the provider's issuer URL; its discovery document and keys are fetched from it.
	// Env: OUTFLOW_<P>_ISSUER (defaults: https://accounts.google.com, https://appleid.apple.com).
	Issuer string
	// ClientID and ClientSecret are the credentials registered with the provider.
	// Env: OUTFLOW_<P>_CLIENT_ID, OUTFLOW_<P>_CLIENT_SECRET.
	ClientID     string
	ClientSecret string
}

// Enabled reports whether the provider is configured.
func (p ProviderConfig) Enabled() bool { return p.ClientID != "" && p.Issuer != "" }

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

	if raw := strings.TrimSpace(getenv("OUTFLOW_SECRET_KEY_PREVIOUS")); raw != "" {
		for _, part := range strings.Split(raw, ",") {
			key, err := decodeKey(strings.TrimSpace(part))
			if err != nil {
				errs = append(errs, fmt.Errorf("OUTFLOW_SECRET_KEY_PREVIOUS %s", err))
				continue
			}
			c.PreviousSecretKeys = append(c.PreviousSecretKeys, key)
		}
	}

	c.PublicURL = strings.TrimRight(cmp.Or(strings.TrimSpace(getenv("OUTFLOW_PUBLIC_URL")), "http://"+c.HTTPAddr), "/")
	c.AppURL = strings.TrimRight(cmp.Or(strings.TrimSpace(getenv("OUTFLOW_APP_URL")), c.PublicURL), "/")
	for name, v := range map[string]string{"OUTFLOW_PUBLIC_URL": c.PublicURL, "OUTFLOW_APP_URL": c.AppURL} {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s %q must be an http(s) URL", name, v))
		}
	}

	c.SMTPURL = strings.TrimSpace(getenv("OUTFLOW_SMTP_URL"))
	if c.SMTPURL != "" {
		if u, err := url.Parse(c.SMTPURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
			errs = append(errs, errors.New("OUTFLOW_SMTP_URL must be smtp://user:pass@host:587 (STARTTLS) or smtps://user:pass@host:465"))
		}
	}
	c.MailFrom = cmp.Or(strings.TrimSpace(getenv("OUTFLOW_MAIL_FROM")), "Outflow <no-reply@localhost>")

	c.Captcha = cmp.Or(strings.ToLower(strings.TrimSpace(getenv("OUTFLOW_CAPTCHA"))), "off")
	c.TurnstileSecret = strings.TrimSpace(getenv("OUTFLOW_TURNSTILE_SECRET"))
	c.TurnstileSiteKey = strings.TrimSpace(getenv("OUTFLOW_TURNSTILE_SITE_KEY"))
	c.TurnstileVerifyURL = cmp.Or(strings.TrimSpace(getenv("OUTFLOW_TURNSTILE_VERIFY_URL")),
		"https://challenges.cloudflare.com/turnstile/v0/siteverify")
	switch c.Captcha {
	case "off":
	case "turnstile":
		if c.TurnstileSecret == "" {
			errs = append(errs, errors.New("OUTFLOW_TURNSTILE_SECRET is required when OUTFLOW_CAPTCHA=turnstile"))
		}
	default:
		errs = append(errs, fmt.Errorf("OUTFLOW_CAPTCHA %q must be off or turnstile", c.Captcha))
	}

	if c.RequireEmailVerification, err = boolVar(getenv, "OUTFLOW_REQUIRE_EMAIL_VERIFICATION", true); err != nil {
		errs = append(errs, err)
	}
	c.AvatarDir = cmp.Or(strings.TrimSpace(getenv("OUTFLOW_AVATAR_DIR")), ".data/avatars")
	if c.EdgeLocation, err = boolVar(getenv, "OUTFLOW_EDGE_LOCATION", false); err != nil {
		errs = append(errs, err)
	}

	if c.WebhooksAllowPrivate, err = boolVar(getenv, "OUTFLOW_WEBHOOKS_ALLOW_PRIVATE", false); err != nil {
		errs = append(errs, err)
	}

	c.DNSServer = strings.TrimSpace(getenv("OUTFLOW_DNS_SERVER"))
	if c.DNSServer != "" {
		if _, _, err := net.SplitHostPort(c.DNSServer); err != nil {
			errs = append(errs, fmt.Errorf("OUTFLOW_DNS_SERVER %q must be host:port (for example 1.1.1.1:53)", c.DNSServer))
		}
	}
	if c.VerifySMTPProbe, err = boolVar(getenv, "OUTFLOW_VERIFY_SMTP_PROBE", false); err != nil {
		errs = append(errs, err)
	}
	c.VerifyProbeFrom = strings.ToLower(strings.TrimSpace(getenv("OUTFLOW_VERIFY_PROBE_FROM")))
	if c.VerifyProbeFrom != "" {
		if local, domain, ok := strings.Cut(c.VerifyProbeFrom, "@"); !ok || local == "" || !strings.Contains(domain, ".") ||
			strings.ContainsAny(c.VerifyProbeFrom, " <>\r\n") {
			errs = append(errs, fmt.Errorf("OUTFLOW_VERIFY_PROBE_FROM %q must be a plain address (for example verify@mail.example.com)", c.VerifyProbeFrom))
		}
	} else if c.VerifySMTPProbe {
		errs = append(errs, errors.New("OUTFLOW_VERIFY_PROBE_FROM is required when OUTFLOW_VERIFY_SMTP_PROBE is on: the MAIL FROM address of probes"))
	}
	c.VerifyHeloName = strings.TrimSpace(getenv("OUTFLOW_VERIFY_HELO_NAME"))
	if strings.ContainsAny(c.VerifyHeloName, " \r\n") {
		errs = append(errs, fmt.Errorf("OUTFLOW_VERIFY_HELO_NAME %q must be a host name", c.VerifyHeloName))
	}
	port, err := intVar(getenv, "OUTFLOW_VERIFY_SMTP_PORT", 25, 1, 65535)
	if err != nil {
		errs = append(errs, err)
	}
	c.VerifySMTPPort = int(port)

	if c.AllowInsecureMail, err = boolVar(getenv, "OUTFLOW_ALLOW_INSECURE_MAIL", false); err != nil {
		errs = append(errs, err)
	}
	c.MailCAFile = strings.TrimSpace(getenv("OUTFLOW_MAIL_CA_FILE"))
	c.GeoIPDB = strings.TrimSpace(getenv("OUTFLOW_GEOIP_DB"))
	c.TrackingHost = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(getenv("OUTFLOW_TRACKING_HOST"))), ".")
	if strings.ContainsAny(c.TrackingHost, " /:@") {
		errs = append(errs, fmt.Errorf("OUTFLOW_TRACKING_HOST %q must be a host name (for example t.outflow.example)", c.TrackingHost))
	}
	c.Edition = strings.TrimSpace(getenv("OUTFLOW_EDITION"))
	switch c.Edition {
	case "":
		c.Edition = "self_hosted"
	case "self_hosted", "hosted":
	default:
		errs = append(errs, fmt.Errorf("OUTFLOW_EDITION %q must be self_hosted or hosted", c.Edition))
	}
	c.DomainAuthGrace = 72 * time.Hour
	if raw := strings.TrimSpace(getenv("OUTFLOW_DOMAIN_AUTH_GRACE")); raw != "" {
		d, err := time.ParseDuration(raw)
		if err != nil || d < 0 || d > 90*24*time.Hour {
			errs = append(errs, fmt.Errorf("OUTFLOW_DOMAIN_AUTH_GRACE %q must be a duration between 0s and 2160h (for example 72h)", raw))
		} else {
			c.DomainAuthGrace = d
		}
	}
	maxMailboxes, err := intVar(getenv, "OUTFLOW_MAX_MAILBOXES", 100, 1, 100000)
	if err != nil {
		errs = append(errs, err)
	}
	c.MaxMailboxes = int(maxMailboxes)
	dailyCampaigns, err := intVar(getenv, "OUTFLOW_DAILY_CAMPAIGNS", 100, 1, 100000)
	if err != nil {
		errs = append(errs, err)
	}
	c.DailyCampaigns = int(dailyCampaigns)
	for _, w := range []struct {
		name string
		def  time.Duration
		into *time.Duration
	}{
		{"OUTFLOW_OPEN_MACHINE_WINDOW", 60 * time.Second, &c.OpenMachineWindow},
		{"OUTFLOW_CLICK_MACHINE_WINDOW", 30 * time.Second, &c.ClickMachineWindow},
		{"OUTFLOW_CLICK_BURST_WINDOW", 10 * time.Second, &c.ClickBurstWindow},
		{"OUTFLOW_PROBABLE_SCANNER_WINDOW", 300 * time.Second, &c.ProbableScannerWindow},
	} {
		*w.into = w.def
		if raw := strings.TrimSpace(getenv(w.name)); raw != "" {
			d, err := time.ParseDuration(raw)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %q must be a duration (for example %s)", w.name, raw, w.def))
			} else {
				*w.into = d
			}
		}
	}
	if raw := strings.TrimSpace(getenv("OUTFLOW_TEST_RUN_WAIT")); raw != "" {
		d, err := time.ParseDuration(raw)
		if err != nil || d < 0 || d > time.Hour {
			errs = append(errs, fmt.Errorf("OUTFLOW_TEST_RUN_WAIT %q must be a duration between 0s and 1h (for example 5s)", raw))
		} else {
			c.TestRunWait = d
		}
	}

	mailProvider := func(prefix string, def MailboxOAuthConfig) MailboxOAuthConfig {
		v := func(name, fallback string) string { return cmp.Or(strings.TrimSpace(getenv(prefix+name)), fallback) }
		m := MailboxOAuthConfig{ClientID: v("_CLIENT_ID", ""), ClientSecret: v("_CLIENT_SECRET", ""),
			AuthURL: v("_AUTH_URL", def.AuthURL), TokenURL: v("_TOKEN_URL", def.TokenURL),
			APIURL: strings.TrimRight(v("_API_URL", def.APIURL), "/"), SMTP: v("_SMTP", def.SMTP), IMAP: v("_IMAP", def.IMAP)}
		for name, raw := range map[string]string{"_AUTH_URL": m.AuthURL, "_TOKEN_URL": m.TokenURL, "_API_URL": m.APIURL} {
			if u, err := url.Parse(raw); raw != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "") {
				errs = append(errs, fmt.Errorf("%s%s %q must be an http(s) URL", prefix, name, raw))
			}
		}
		for name, raw := range map[string]string{"_SMTP": m.SMTP, "_IMAP": m.IMAP} {
			if _, port, err := net.SplitHostPort(raw); err != nil || port == "" {
				errs = append(errs, fmt.Errorf("%s%s %q must be host:port", prefix, name, raw))
			}
		}
		return m
	}
	c.MailboxGoogle = mailProvider("OUTFLOW_MAILBOX_GOOGLE", MailboxOAuthConfig{
		AuthURL: "https://accounts.google.com/o/oauth2/v2/auth", TokenURL: "https://oauth2.googleapis.com/token",
		APIURL: "https://gmail.googleapis.com", SMTP: "smtp.gmail.com:465", IMAP: "imap.gmail.com:993"})
	c.MailboxMicrosoft = mailProvider("OUTFLOW_MAILBOX_MICROSOFT", MailboxOAuthConfig{
		AuthURL:  "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
		TokenURL: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
		SMTP:     "smtp.office365.com:587", IMAP: "outlook.office365.com:993"})

	provider := func(prefix, defaultIssuer string) ProviderConfig {
		return ProviderConfig{
			Name:         strings.TrimSpace(getenv(prefix + "_NAME")),
			Issuer:       strings.TrimRight(cmp.Or(strings.TrimSpace(getenv(prefix+"_ISSUER")), defaultIssuer), "/"),
			ClientID:     strings.TrimSpace(getenv(prefix + "_CLIENT_ID")),
			ClientSecret: strings.TrimSpace(getenv(prefix + "_CLIENT_SECRET")),
		}
	}
	c.Google = provider("OUTFLOW_GOOGLE", "https://accounts.google.com")
	c.Apple = provider("OUTFLOW_APPLE", "https://appleid.apple.com")
	c.OIDC = provider("OUTFLOW_OIDC", "")
	if c.OIDC.ClientID != "" && c.OIDC.Issuer == "" {
		errs = append(errs, errors.New("OUTFLOW_OIDC_ISSUER is required when OUTFLOW_OIDC_CLIENT_ID is set"))
	}

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
// boolVar reads a true/false variable (1/0, t/f, true/false in any case); unset or empty keeps def.
func boolVar(getenv func(string) string, name string, def bool) (bool, error) {
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return def, nil
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return def, fmt.Errorf("%s %q must be true or false (1 or 0)", name, raw)
	}
	return v, nil
}

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
