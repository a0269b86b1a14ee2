package app

import (
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/eventing/realtime"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/platform/sysmail"
	"github.com/outflowhq/outflow/jobs"
)

// NewJobs builds the process's River client with every worker and every event consumer, as `outflow serve`
// runs it; work makes it fetch and run jobs (roles worker and all), otherwise it only inserts. Tests that need
// background work done start the same client.
func NewJobs(cfg config.Config, pool *pgxpool.Pool, logger *slog.Logger, sender sysmail.Sender, work bool) (*river.Client[pgx.Tx], error) {
	webhooks, deliverer, err := webhookDelivery(cfg, pool, logger)
	if err != nil {
		return nil, err
	}
	keyring, err := seal.NewKeyring(append([][]byte{cfg.SecretKey}, cfg.PreviousSecretKeys...)...)
	if err != nil {
		return nil, err
	}
	dialer, err := mailDialer(cfg)
	if err != nil {
		return nil, err
	}
	creds, err := mailCredentials(cfg, pool, keyring)
	if err != nil {
		return nil, err
	}
	client, err := jobs.NewClient(jobs.Deps{
		Pool: pool, Logger: logger, Dispatcher: events.NewDispatcher(pool, realtime.NewNotifier(), webhooks), Idempotency: idempotency.NewStore(pool, logger),
		Notifications: notify.NewDeliverer(pool, sender, notify.LogPusher{Logger: logger}, cfg.AppURL),
		Webhooks:      deliverer,
		Verifier:      emailVerifier(cfg),
		Sending:       sending.New(pool, creds, dialer, logger, cfg.DomainAuthGrace),
		Syncer:        mailsync.NewSyncer(pool, creds, dialer, logger),
		Resolver:      verify.NewResolver(cfg.DNSServer),
		TrackingHost:  cfg.TrackingHost,
	}, jobs.Options{Work: work, MaxWorkers: cfg.JobWorkers, SoftStopTimeout: cfg.ShutdownTimeout / 2})
	if err != nil {
		return nil, fmt.Errorf("build job client: %w", err)
	}
	return client, nil
}

// emailVerifier builds the built-in email verifier the configuration describes (DNS server, SMTP probe). The
// probe reaches private addresses only where tenant-chosen destinations may (OUTFLOW_WEBHOOKS_ALLOW_PRIVATE).
func emailVerifier(cfg config.Config) *verify.Verifier {
	o := verify.Options{Resolver: verify.NewResolver(cfg.DNSServer)}
	if cfg.VerifySMTPProbe {
		o.Probe = &verify.ProbeOptions{From: cfg.VerifyProbeFrom, HeloName: cfg.VerifyHeloName, Port: cfg.VerifySMTPPort,
			AllowPrivate: cfg.WebhooksAllowPrivate}
	}
	return verify.New(o)
}
