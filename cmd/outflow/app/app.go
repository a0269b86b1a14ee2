package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/agents/apps"
	"github.com/outflowhq/outflow/internal/agents/leadgate"
	"github.com/outflowhq/outflow/internal/agents/runs"
	"github.com/outflowhq/outflow/internal/analytics/engagement"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/testrun"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/realtime"
	"github.com/outflowhq/outflow/internal/identity/captcha"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/platform/sysmail"
	"github.com/outflowhq/outflow/internal/trail/usage"
	"github.com/outflowhq/outflow/jobs"
)

// Options choose what one process builds: `outflow serve --role` sets API and Work; tests replace the pieces
// that reach outside the process.
type Options struct {
	// API builds the HTTP surface (roles api and all).
	API bool
	// Work builds the River client that works jobs (roles worker and all).
	Work bool
	// Pool is an open application pool to use instead of opening one from the configuration; its owner
	// closes it. Tests hand over their database's pool.
	Pool *pgxpool.Pool
	// Mail replaces the system mail sender the configuration implies (tests capture mail with it).
	Mail sysmail.Sender
	// Captcha replaces the verifier the configuration implies.
	Captcha captcha.Verifier
	// Now replaces the clock the tracking endpoints stamp opens and clicks with, which the unified inbox's reads
	// also judge snoozes, trials and the overview's windows by (nil: time.Now); tests of the classification
	// windows set it to the millisecond.
	Now func() time.Time
	// Networks replaces the scanner, probable-scanner and privacy-proxy lists (nil: the embedded ones); tests
	// name loopback networks in them.
	Networks *tracking.Networks
	// AppsTLS is the TLS configuration of the calls to customer apps (app_action steps, connection tests); nil
	// uses the system's roots. Tests trust their own HTTPS app server with it.
	AppsTLS *tls.Config
}

// App is one Outflow process: every component built once from one configuration and handed to the HTTP
// surface and to the workers that use it. `outflow serve` runs one; handlers/apitest builds the same for the
// API tests, so what the tests exercise is what production wires.
type App struct {
	// Pool is the application's database pool (row-level security applies to it).
	Pool *pgxpool.Pool
	// Handler is the root HTTP handler (nil unless Options.API).
	Handler http.Handler
	// Workers is the River client that works jobs (nil unless Options.Work); Start starts it.
	Workers *river.Client[pgx.Tx]
	// Usage records API-key requests for the usage log (nil unless Options.API).
	Usage *usage.Recorder
	// Tracking writes the opens and clicks the tracking endpoints receive (nil unless Options.API).
	Tracking *tracking.Batcher

	parts
	realtime *realtime.Gateway
	ownPool  bool
}

// parts are the components both the HTTP surface and the workers are built from.
type parts struct {
	cfg     config.Config
	logger  *slog.Logger
	pool    *pgxpool.Pool
	keyring *seal.Keyring
	mail    sysmail.Sender
	captcha captcha.Verifier
	dialer  mailbox.Dialer
	creds   *mailbox.Credentials
	// resolver answers every DNS question the deployment asks (OUTFLOW_DNS_SERVER, or the system's).
	resolver *net.Resolver
	verifier *verify.Verifier
	// jobs enqueues every job a write causes, inside the writing transaction. It is insert-only: the
	// working client (App.Workers) is built from consumers that enqueue through it, so it cannot be it.
	jobs     *river.Client[pgx.Tx]
	outbox   *events.Outbox
	webhooks *delivery.Consumer
	deliver  *delivery.Deliverer
	idem     *idempotency.Store
	metrics  *prometheus.Registry
	// testRuns starts campaign test runs (API) and carries them forward (workers), with the configured waits.
	testRuns *testrun.Runner
	// signer signs campaign messages' tracking and unsubscribe tokens (workers) and verifies them (endpoints)
	// under the deployment secret; previous secrets keep verifying, so links in mail sent before a rotation work.
	signer *tracking.Signer
	// windows judge tracked opens and clicks (OUTFLOW_*_WINDOW, validated before anything starts).
	windows tracking.Windows
	// networks are the scanner and privacy-proxy lists the tracking endpoints look addresses up in; now is
	// their clock (and the unified inbox's reads').
	networks *tracking.Networks
	now      func() time.Time
	// geo resolves tracked readers' countries (OUTFLOW_GEOIP_DB; nil: unknown), opened once for the API.
	geo *engagement.Geo
	// campaigns is the sequence engine: the workers plan and settle with it, and the API applies posted
	// deliverability events (a bounce's lead, a reply) through it.
	campaigns *engine.Engine
	// sending is the send pipeline: the workers send through it, and the API applies a person's decision on an
	// ambiguous send through it (a campaign send's result moves its lead in the transaction that records it).
	sending *sending.Pipeline
	// approvals holds actions the agent policy gate refused for a person (API), acts on approved ones through
	// the executors registered per action type, and expires the undecided (workers).
	approvals *approvals.Service
	// runs carries agent runs: the API creates and cancels them, the workers move them on, and approving a held
	// launch runs its executor (registered with approvals when it is built).
	runs *runs.Runner
	// leads gates an agent's ways of adding people to campaigns that send; approving held leads runs its
	// executors (registered with approvals when it is built).
	leads *leadgate.Gate
	// apps calls customer apps (the app_action job, connection tests) under the egress rules for
	// tenant-chosen URLs (OUTFLOW_WEBHOOKS_ALLOW_PRIVATE).
	apps       *apps.Client
	appsEgress egress.Options
}

// New builds the process opts ask for. On error, whatever was built is released.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger, opts Options) (_ *App, err error) {
	a := &App{Pool: opts.Pool}
	defer func() {
		if err != nil {
			_ = a.Close(context.WithoutCancel(ctx))
		}
	}()
	p := &a.parts
	if p.windows, err = trackingWindows(cfg); err != nil {
		return nil, err
	}
	if a.Pool == nil {
		if a.Pool, err = db.Open(ctx, cfg.DatabaseURL, cfg.DBMaxConns); err != nil {
			return nil, err
		}
		a.ownPool = true
	}
	p.cfg, p.logger, p.pool = cfg, logger, a.Pool
	if p.keyring, err = seal.NewKeyring(append([][]byte{cfg.SecretKey}, cfg.PreviousSecretKeys...)...); err != nil {
		return nil, err
	}
	if p.mail = opts.Mail; p.mail == nil {
		if p.mail, err = systemMail(cfg, logger); err != nil {
			return nil, err
		}
	}
	if p.captcha = opts.Captcha; p.captcha == nil {
		p.captcha = captcha.Verifier(captcha.Off{})
		if cfg.Captcha == "turnstile" {
			p.captcha = captcha.NewTurnstile(cfg.TurnstileSecret, cfg.TurnstileVerifyURL)
		}
	}
	if p.dialer, err = mailDialer(cfg); err != nil {
		return nil, err
	}
	if p.creds, err = mailCredentials(cfg, p.pool, p.keyring); err != nil {
		return nil, err
	}
	p.resolver = verify.NewResolver(cfg.DNSServer)
	p.verifier = emailVerifier(cfg, p.resolver)
	if p.jobs, err = jobs.NewClient(jobs.Deps{Pool: p.pool, Logger: logger}, jobs.Options{}); err != nil {
		return nil, fmt.Errorf("build job inserter: %w", err)
	}
	p.outbox = events.NewOutbox(p.jobs)
	p.approvals = approvals.New(p.pool, p.outbox, cfg.AppURL)
	p.runs = runs.NewRunner(runs.Deps{Pool: p.pool, Store: campaign.NewStore(p.outbox, cfg.DailyCampaigns, nil), Outbox: p.outbox,
		Approvals: p.approvals, AuthGrace: cfg.DomainAuthGrace, AppURL: cfg.AppURL})
	p.leads = leadgate.New(p.approvals)
	p.webhooks, p.deliver = webhookDelivery(cfg, p.pool, logger, p.keyring, p.jobs)
	p.idem = idempotency.NewStore(p.pool, logger)
	p.testRuns = testrun.NewRunner(p.pool, cfg.TestRunWait)
	if p.signer, err = tracking.NewSigner(cfg.SecretKey, cfg.PreviousSecretKeys...); err != nil {
		return nil, fmt.Errorf("build tracking signer: %w", err)
	}
	// A lead whose contact was never checked waits for the built-in checks before its first send.
	p.campaigns = engine.New(p.pool, engine.Options{AuthGrace: cfg.DomainAuthGrace, Verifier: verify.Requests{},
		Tracking: engine.Tracking{Signer: p.signer, Host: cfg.TrackingHost, PublicURL: cfg.PublicURL}})
	p.sending = sending.New(p.pool, p.creds, p.dialer, p.logger, cfg.DomainAuthGrace)
	p.sending.OnSettle(p.campaigns.Settle)
	p.appsEgress = egress.Options{AllowPrivate: cfg.WebhooksAllowPrivate}
	p.apps = apps.NewClient(apps.Options{Egress: p.appsEgress, TLS: opts.AppsTLS})
	if opts.Work {
		if a.Workers, err = newWorkers(p); err != nil {
			return nil, err
		}
	}
	if opts.API {
		p.metrics = prometheus.NewRegistry()
		p.metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		a.Usage = usage.NewRecorder(p.pool, logger)
		if p.networks = opts.Networks; p.networks == nil {
			if p.networks, err = tracking.LoadNetworks(); err != nil {
				return nil, err
			}
		}
		if p.now = opts.Now; p.now == nil {
			p.now = time.Now
		}
		if p.geo, err = engagement.OpenGeo(cfg.GeoIPDB); err != nil {
			return nil, err
		}
		a.Tracking = tracking.NewBatcher(p.pool, logger, tracking.Options{Windows: p.windows, Outbox: p.outbox})
		a.realtime = realtime.New(p.pool, logger, realtime.Options{})
		if a.Handler, err = newHandler(p, a.Usage, a.Tracking, a.realtime); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Start starts the workers (when the process has them).
func (a *App) Start(ctx context.Context) error {
	if a.Workers == nil {
		return nil
	}
	if err := a.Workers.Start(ctx); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	a.logger.InfoContext(ctx, "workers started", slog.Int("max_workers", a.cfg.JobWorkers))
	return nil
}

// Close releases the process's components in dependency order, after the HTTP server has shut down: the
// realtime gateway closes its WebSockets (1001; http.Server.Shutdown leaves upgraded connections alone), the
// usage log and the tracking events write what they hold, the workers stop (running jobs get the soft-stop time to finish), and
// the pool closes last, when nothing uses it.
func (a *App) Close(ctx context.Context) error {
	var errs []error
	if a.realtime != nil {
		errs = append(errs, a.realtime.Close(ctx))
	}
	if a.Usage != nil {
		if err := a.Usage.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("usage log: %w", err))
		}
	}
	if a.Tracking != nil {
		if err := a.Tracking.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("tracking events: %w", err))
		}
	}
	if err := a.geo.Close(); err != nil {
		errs = append(errs, fmt.Errorf("geo database: %w", err))
	}
	if a.Workers != nil {
		if err := a.Workers.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop workers: %w", err))
		}
	}
	if a.ownPool && a.Pool != nil {
		a.Pool.Close()
	}
	return errors.Join(errs...)
}

// trackingWindows are the windows the configuration sets for judging opens and clicks, refused at start
// when one is outside its range (tracking.Windows.Validate), each problem on its own line.
func trackingWindows(cfg config.Config) (tracking.Windows, error) {
	w := tracking.Windows{OpenMachine: cfg.OpenMachineWindow, ClickMachine: cfg.ClickMachineWindow,
		Burst: cfg.ClickBurstWindow, ProbableScanner: cfg.ProbableScannerWindow}
	if err := w.Validate(); err != nil {
		return w, fmt.Errorf("invalid configuration: the tracking windows (OUTFLOW_OPEN_MACHINE_WINDOW, OUTFLOW_CLICK_MACHINE_WINDOW, "+
			"OUTFLOW_CLICK_BURST_WINDOW, OUTFLOW_PROBABLE_SCANNER_WINDOW):\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	return w, nil
}
