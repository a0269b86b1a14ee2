package app

import (
	"fmt"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/internal/agents/apps"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/campaigns/unsubscribe"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/eventing/realtime"
	"github.com/outflowhq/outflow/internal/inbox/classify"
	"github.com/outflowhq/outflow/internal/inbox/replies"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/jobs"
)

// newWorkers builds the River client that works jobs, with every worker and every event consumer, from the
// process's parts.
func newWorkers(p *parts) (*river.Client[pgx.Tx], error) {
	campaigns := p.campaigns
	syncer := mailsync.NewSyncer(p.pool, p.creds, p.dialer, p.logger)
	// A synced reply is classified, and when it answers a campaign send moves its lead, in the transaction that
	// stores the reply.
	rules, err := classify.NewRules()
	if err != nil {
		return nil, fmt.Errorf("build reply classifier: %w", err)
	}
	syncer.OnInbound(replies.New(campaigns, unsubscribe.New(p.pool, p.signer, p.outbox), rules, nil).Inbound)
	// Every event consumer is registered here, once. Each acknowledges each event on its own under its name
	// (internal/eventing/events/doc.go), so a retry runs only the ones that failed; the realtime notice, the
	// cheapest, goes first.
	dispatcher := events.NewDispatcher(p.pool, realtime.NewNotifier(), p.webhooks)
	client, err := jobs.NewClient(jobs.Deps{
		Pool: p.pool, Logger: p.logger, Dispatcher: dispatcher, Idempotency: p.idem,
		Notifications: notify.NewDeliverer(p.pool, p.mail, notify.LogPusher{Logger: p.logger}, p.cfg.AppURL),
		Webhooks:      p.deliver,
		Verifier:      p.verifier,
		Sending:       p.sending,
		Engine:        campaigns,
		Syncer:        syncer,
		TestRuns:      p.testRuns,
		Resolver:      p.resolver,
		TrackingHost:  p.cfg.TrackingHost,
		Clicks:        tracking.NewClicks(p.pool, p.outbox, p.signer),
		Approvals:     p.approvals,
		Runs:          p.runs,
		AppActions:    apps.NewActions(p.pool, p.keyring, p.apps, nil),
	}, jobs.Options{Work: true, MaxWorkers: p.cfg.JobWorkers, SoftStopTimeout: p.cfg.ShutdownTimeout / 2})
	if err != nil {
		return nil, fmt.Errorf("build job client: %w", err)
	}
	return client, nil
}

// emailVerifier builds the built-in email verifier the configuration describes (DNS server, SMTP probe). The
// probe reaches private addresses only where tenant-chosen destinations may (OUTFLOW_WEBHOOKS_ALLOW_PRIVATE).
func emailVerifier(cfg config.Config, resolver *net.Resolver) *verify.Verifier {
	o := verify.Options{Resolver: resolver}
	if cfg.VerifySMTPProbe {
		o.Probe = &verify.ProbeOptions{From: cfg.VerifyProbeFrom, HeloName: cfg.VerifyHeloName, Port: cfg.VerifySMTPPort,
			AllowPrivate: cfg.WebhooksAllowPrivate}
	}
	return verify.New(o)
}
