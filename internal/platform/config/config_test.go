package config_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/config"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{"DATABASE_URL": "postgres://u@127.0.0.1:5432/db"}))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", c.HTTPAddr)
	require.Equal(t, slog.LevelInfo, c.LogLevel)
	require.Equal(t, int64(10<<20), c.MaxBodyBytes)
	require.Equal(t, 20*time.Second, c.ShutdownTimeout)
	require.Equal(t, int32(20), c.DBMaxConns)
	require.Equal(t, 50, c.JobWorkers)
	require.Empty(t, c.SecretKey)
	require.ErrorContains(t, c.RequireSecretKey(), "OUTFLOW_SECRET_KEY is required")
}

func TestLoadSecretKeyForms(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
	} {
		c, err := config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_SECRET_KEY": raw}))
		require.NoError(t, err, raw)
		require.Len(t, c.SecretKey, 32)
		require.Equal(t, byte(31), c.SecretKey[31])
		require.NoError(t, c.RequireSecretKey())
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := config.Load(env(map[string]string{
		"DATABASE_URL":             "mysql://nope",
		"OUTFLOW_HTTP_ADDR":        "8080",
		"OUTFLOW_SECRET_KEY":       "c2hvcnQ=",
		"OUTFLOW_LOG_LEVEL":        "loud",
		"OUTFLOW_MAX_BODY_BYTES":   "12",
		"OUTFLOW_DB_MAX_CONNS":     "many",
		"OUTFLOW_JOB_WORKERS":      "0",
		"OUTFLOW_SHUTDOWN_TIMEOUT": "forever",
	}))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		"DATABASE_URL must be a postgres://",
		`OUTFLOW_HTTP_ADDR "8080" must be host:port`,
		"OUTFLOW_SECRET_KEY must decode to at least 32 bytes (got 5)",
		`OUTFLOW_LOG_LEVEL "loud" must be one of`,
		`OUTFLOW_MAX_BODY_BYTES "12" must be an integer between 1024`,
		`OUTFLOW_DB_MAX_CONNS "many" must be an integer`,
		`OUTFLOW_JOB_WORKERS "0" must be an integer between 1`,
		`OUTFLOW_SHUTDOWN_TIMEOUT "forever" must be a duration`,
	} {
		require.Contains(t, msg, want)
	}
}

func TestLoadRequiresDatabaseURL(t *testing.T) {
	t.Parallel()
	_, err := config.Load(env(nil))
	require.ErrorContains(t, err, "DATABASE_URL is required")
}

func TestLoadAccountSettings(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{
		"DATABASE_URL":                       "postgres://x/y",
		"OUTFLOW_PUBLIC_URL":                 "https://api.example.com/",
		"OUTFLOW_SMTP_URL":                   "smtp://u:p@relay.example.com:587",
		"OUTFLOW_CAPTCHA":                    "turnstile",
		"OUTFLOW_TURNSTILE_SECRET":           "s",
		"OUTFLOW_REQUIRE_EMAIL_VERIFICATION": "false",
		"OUTFLOW_GOOGLE_CLIENT_ID":           "gid",
	}))
	require.NoError(t, err)
	require.Equal(t, "https://api.example.com", c.PublicURL)
	require.Equal(t, "https://api.example.com", c.AppURL, "the app URL defaults to the public URL")
	require.False(t, c.RequireEmailVerification)
	require.True(t, c.Google.Enabled())
	require.Equal(t, "https://accounts.google.com", c.Google.Issuer)
	require.False(t, c.OIDC.Enabled())

	d, err := config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y"}))
	require.NoError(t, err)
	require.Equal(t, "off", d.Captcha)
	require.True(t, d.RequireEmailVerification)
	require.Equal(t, "http://127.0.0.1:8080", d.PublicURL)

	_, err = config.Load(env(map[string]string{
		"DATABASE_URL": "postgres://x/y", "OUTFLOW_CAPTCHA": "turnstile", "OUTFLOW_SMTP_URL": "http://nope",
		"OUTFLOW_OIDC_CLIENT_ID": "c", "OUTFLOW_REQUIRE_EMAIL_VERIFICATION": "maybe",
	}))
	require.ErrorContains(t, err, "OUTFLOW_TURNSTILE_SECRET is required")
	require.ErrorContains(t, err, "OUTFLOW_SMTP_URL must be")
	require.ErrorContains(t, err, "OUTFLOW_OIDC_ISSUER is required")
	require.ErrorContains(t, err, `OUTFLOW_REQUIRE_EMAIL_VERIFICATION "maybe"`)
}

func TestLoadWebhooksAllowPrivate(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y"}))
	require.NoError(t, err)
	require.False(t, c.WebhooksAllowPrivate, "off unless asked for")
	c, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_WEBHOOKS_ALLOW_PRIVATE": "1"}))
	require.NoError(t, err)
	require.True(t, c.WebhooksAllowPrivate)
	_, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_WEBHOOKS_ALLOW_PRIVATE": "yes please"}))
	require.ErrorContains(t, err, "OUTFLOW_WEBHOOKS_ALLOW_PRIVATE")
}

func TestLoadMailboxSettings(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y"}))
	require.NoError(t, err)
	require.False(t, c.AllowInsecureMail, "off unless asked for")
	require.Empty(t, c.MailCAFile)
	require.Equal(t, 100, c.MaxMailboxes)
	require.Equal(t, 100, c.DailyCampaigns)
	require.Empty(t, c.TrackingHost)
	require.Equal(t, 72*time.Hour, c.DomainAuthGrace)
	require.Zero(t, c.TestRunWait, "the campaigns' own default")
	c, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_ALLOW_INSECURE_MAIL": "1",
		"OUTFLOW_MAIL_CA_FILE": " /etc/outflow/ca.pem ", "OUTFLOW_MAX_MAILBOXES": "3", "OUTFLOW_TRACKING_HOST": "T.Outflow.dev.",
		"OUTFLOW_DOMAIN_AUTH_GRACE": "24h", "OUTFLOW_DAILY_CAMPAIGNS": "7", "OUTFLOW_TEST_RUN_WAIT": "750ms"}))
	require.NoError(t, err)
	require.True(t, c.AllowInsecureMail)
	require.Equal(t, "/etc/outflow/ca.pem", c.MailCAFile)
	require.Equal(t, 3, c.MaxMailboxes)
	require.Equal(t, 7, c.DailyCampaigns)
	require.Equal(t, "t.outflow.dev", c.TrackingHost)
	require.Equal(t, 24*time.Hour, c.DomainAuthGrace)
	require.Equal(t, 750*time.Millisecond, c.TestRunWait)
	_, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_ALLOW_INSECURE_MAIL": "maybe",
		"OUTFLOW_MAX_MAILBOXES": "0", "OUTFLOW_TRACKING_HOST": "https://t.x", "OUTFLOW_DOMAIN_AUTH_GRACE": "forever", "OUTFLOW_DAILY_CAMPAIGNS": "0",
		"OUTFLOW_TEST_RUN_WAIT": "2h"}))
	require.ErrorContains(t, err, "OUTFLOW_ALLOW_INSECURE_MAIL")
	require.ErrorContains(t, err, "OUTFLOW_TRACKING_HOST")
	require.ErrorContains(t, err, "OUTFLOW_TEST_RUN_WAIT")
	require.ErrorContains(t, err, "OUTFLOW_DOMAIN_AUTH_GRACE")
	require.ErrorContains(t, err, "OUTFLOW_MAX_MAILBOXES")
	require.ErrorContains(t, err, "OUTFLOW_DAILY_CAMPAIGNS")
}

func TestLoadTrackingWindowsWithTheirDefaultsAndNamesAnUnreadableOne(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y"}))
	require.NoError(t, err)
	require.Equal(t, []time.Duration{60 * time.Second, 30 * time.Second, 10 * time.Second, 300 * time.Second},
		[]time.Duration{c.OpenMachineWindow, c.ClickMachineWindow, c.ClickBurstWindow, c.ProbableScannerWindow})
	c, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_OPEN_MACHINE_WINDOW": "2m",
		"OUTFLOW_CLICK_MACHINE_WINDOW": "900s", "OUTFLOW_CLICK_BURST_WINDOW": "1s", "OUTFLOW_PROBABLE_SCANNER_WINDOW": "1h"}))
	require.NoError(t, err, "ranges are the tracking windows' own rule, checked at start")
	require.Equal(t, []time.Duration{2 * time.Minute, 900 * time.Second, time.Second, time.Hour},
		[]time.Duration{c.OpenMachineWindow, c.ClickMachineWindow, c.ClickBurstWindow, c.ProbableScannerWindow})
	_, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_CLICK_MACHINE_WINDOW": "30",
		"OUTFLOW_CLICK_BURST_WINDOW": "soon"}))
	require.ErrorContains(t, err, `OUTFLOW_CLICK_MACHINE_WINDOW "30" must be a duration (for example 30s)`)
	require.ErrorContains(t, err, `OUTFLOW_CLICK_BURST_WINDOW "soon" must be a duration (for example 10s)`)
}

func TestLoadMailboxConsentProviders(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_MAILBOX_GOOGLE_CLIENT_ID": "g-id"}))
	require.NoError(t, err)
	require.True(t, c.MailboxGoogle.Enabled())
	require.False(t, c.MailboxMicrosoft.Enabled(), "disabled without a client id")
	require.Equal(t, "smtp.gmail.com:465", c.MailboxGoogle.SMTP)
	require.Equal(t, "https://gmail.googleapis.com", c.MailboxGoogle.APIURL)
	require.Equal(t, "outlook.office365.com:993", c.MailboxMicrosoft.IMAP)
	require.Contains(t, c.MailboxMicrosoft.TokenURL, "login.microsoftonline.com")

	_, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_MAILBOX_GOOGLE_SMTP": "smtp.gmail.com",
		"OUTFLOW_MAILBOX_MICROSOFT_TOKEN_URL": "ftp://x/token"}))
	require.ErrorContains(t, err, "OUTFLOW_MAILBOX_GOOGLE_SMTP")
	require.ErrorContains(t, err, "OUTFLOW_MAILBOX_MICROSOFT_TOKEN_URL")
}

func TestLoadEmailVerification(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y"}))
	require.NoError(t, err)
	require.Empty(t, c.DNSServer, "the system resolver unless one is named")
	require.False(t, c.VerifySMTPProbe, "off unless asked for")
	require.Equal(t, 25, c.VerifySMTPPort)

	c, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_DNS_SERVER": "1.1.1.1:53",
		"OUTFLOW_VERIFY_SMTP_PROBE": "true", "OUTFLOW_VERIFY_PROBE_FROM": "Verify@Mail.Example.com",
		"OUTFLOW_VERIFY_HELO_NAME": "probe.example.com", "OUTFLOW_VERIFY_SMTP_PORT": "2525"}))
	require.NoError(t, err)
	require.Equal(t, "1.1.1.1:53", c.DNSServer)
	require.True(t, c.VerifySMTPProbe)
	require.Equal(t, "verify@mail.example.com", c.VerifyProbeFrom)
	require.Equal(t, "probe.example.com", c.VerifyHeloName)
	require.Equal(t, 2525, c.VerifySMTPPort)

	_, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_DNS_SERVER": "1.1.1.1",
		"OUTFLOW_VERIFY_SMTP_PROBE": "sometimes", "OUTFLOW_VERIFY_HELO_NAME": "two words", "OUTFLOW_VERIFY_SMTP_PORT": "0"}))
	require.ErrorContains(t, err, `OUTFLOW_DNS_SERVER "1.1.1.1" must be host:port`)
	require.ErrorContains(t, err, `OUTFLOW_VERIFY_SMTP_PROBE "sometimes"`)
	require.ErrorContains(t, err, "OUTFLOW_VERIFY_HELO_NAME")
	require.ErrorContains(t, err, "OUTFLOW_VERIFY_SMTP_PORT")

	_, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_VERIFY_SMTP_PROBE": "1"}))
	require.ErrorContains(t, err, "OUTFLOW_VERIFY_PROBE_FROM is required")
	_, err = config.Load(env(map[string]string{"DATABASE_URL": "postgres://x/y", "OUTFLOW_VERIFY_PROBE_FROM": "<a@b.c>"}))
	require.ErrorContains(t, err, "OUTFLOW_VERIFY_PROBE_FROM")
}
