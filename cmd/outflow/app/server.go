package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	ht "github.com/ogen-go/ogen/http"
	"github.com/ogen-go/ogen/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers"
	"github.com/outflowhq/outflow/internal/agents/apps"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/agents/productevents"
	"github.com/outflowhq/outflow/internal/agents/tools"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/ingest"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/campaigns/unsubscribe"
	"github.com/outflowhq/outflow/internal/eventing/realtime"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/avatar"
	"github.com/outflowhq/outflow/internal/identity/oidc"
	"github.com/outflowhq/outflow/internal/identity/orgs"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/mailoauth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/httpmw"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/platform/sysmail"
	"github.com/outflowhq/outflow/internal/platform/timezone"
	"github.com/outflowhq/outflow/internal/trail/usage"
	"github.com/outflowhq/outflow/oauth"
)

// APIPrefix is where every customer operation lives.
const APIPrefix = "/v1"

// RootPrefixes are the public paths served outside /v1, as the contract's path-level servers say.
var RootPrefixes = []string{"/.well-known/", "/oauth/authorize", "/t/", "/u/"}

// deps is what the request path around the API handler is assembled from.
type deps struct {
	Logger  *slog.Logger
	Metrics *prometheus.Registry
	Config  config.Config
	// Usage records API-key requests for usage analytics; nil records nothing.
	Usage *usage.Recorder
	// Realtime is the instance's WebSocket gateway, served at /v1/realtime (nil: not served).
	Realtime *realtime.Gateway
}

// newHandler builds the HTTP surface from the process's parts: the handlers, the OAuth provider and the
// sign-in flows (used by the API alone), wrapped in the request path.
func newHandler(p *parts, recorder *usage.Recorder, events *tracking.Batcher, gateway *realtime.Gateway) (http.Handler, error) {
	cfg, d := p.cfg, deps{Logger: p.logger, Metrics: p.metrics, Config: p.cfg, Usage: recorder, Realtime: gateway}
	keyring, sender, inserter, outbox := p.keyring, p.mail, p.jobs, p.outbox
	signer := auth.NewTokenSigner(p.pool, keyring, cfg.PublicURL)
	sessions := accounts.NewSessions(p.pool, signer)
	challenges := accounts.NewChallenges(cfg.SecretKey)
	limiter := auth.NewLimiter(p.pool)
	flows := &accounts.Flows{
		Pool: p.pool, Challenges: challenges, Sessions: sessions, Mail: sender, Captcha: p.captcha,
		Limiter: limiter, Logger: d.Logger,
		RequireEmailVerification: cfg.RequireEmailVerification, AppURL: cfg.AppURL,
	}
	authn := auth.NewAuthenticator(p.pool, signer)
	passkeys := accounts.NewPasskeys(flows, keyring, cfg.PublicURL, cfg.AppURL)
	tools := tools.NewRegistry()
	agentTools := handlers.NewAgentTools(p.pool, tools)
	secrets := append([][]byte{cfg.SecretKey}, cfg.PreviousSecretKeys...)
	oauthProvider, err := oauth.NewProvider(p.pool, limiter, cfg.PublicURL, secrets...)
	if err != nil {
		return nil, err
	}
	zones, err := timezone.Load()
	if err != nil {
		return nil, err
	}
	authn.SetOAuth(oauthProvider)
	twoFactor := accounts.NewTwoFactor(flows, keyring, secrets...)
	oauthHandlers := handlers.NewOAuth(handlers.OAuthDeps{
		Provider: oauthProvider, Pool: p.pool, Authenticator: authn, Flows: flows, TwoFactor: twoFactor,
		Keyring: keyring, Secret: cfg.SecretKey, PublicURL: cfg.PublicURL, Logger: d.Logger,
	})
	campaigns := campaign.NewStore(outbox, cfg.DailyCampaigns, nil)
	hasher, err := tracking.NewIPHasher(cfg.SecretKey)
	if err != nil {
		return nil, err
	}
	unsubscribes := unsubscribe.New(p.pool, p.signer, outbox)
	// Approvals are decided through the API: approved direct sends, composed messages and replies go out as the
	// requester would have sent them.
	p.approvals.Register(policy.EmailCompose, handlers.SendApproved(inserter, orgs.Edition(cfg.Edition)))
	p.approvals.Register(policy.InboxReply, handlers.SendApproved(inserter, orgs.Edition(cfg.Edition)))
	handler := handlers.New(handlers.Deps{
		Logger:              d.Logger,
		System:              handlers.NewSystem(p.pool, d.Logger, zones),
		AuthCore:            handlers.NewAuthCore(flows, sessions),
		Profile:             handlers.NewProfile(p.pool, avatar.Dir(cfg.AvatarDir), cfg.PublicURL),
		Notifications:       handlers.NewNotifications(p.pool),
		Social:              handlers.NewSocial(flows, cfg, passkeys.Enabled()),
		TwoFactor:           handlers.NewTwoFactor(twoFactor),
		Passkeys:            handlers.NewPasskeys(passkeys),
		Organizations:       handlers.NewOrganizations(p.pool, sessions, sender, outbox, cfg.SecretKey, cfg.AppURL),
		APIKeys:             handlers.NewAPIKeys(p.pool, cfg.SecretKey),
		Suppressions:        handlers.NewSuppressions(p.pool, cfg.SecretKey),
		AuditLogs:           handlers.NewAuditLogs(p.pool),
		AgentTools:          agentTools,
		OAuth:               oauthHandlers,
		Webhooks:            handlers.NewWebhooks(p.pool, keyring, egress.Options{AllowPrivate: cfg.WebhooksAllowPrivate}, p.deliver, inserter),
		WebhookDeliveries:   handlers.NewWebhookDeliveries(p.pool, inserter, cfg.SecretKey),
		MCP:                 handlers.NewMCP(tools, d.Logger, cfg.PublicURL, cfg.AppURL),
		Contacts:            handlers.NewContacts(p.pool, cfg.SecretKey, outbox, inserter, p.leads),
		ContactImport:       handlers.NewContactImport(p.pool, inserter, p.leads),
		ContactExport:       handlers.NewContactExport(p.pool, d.Logger),
		ContactVerification: handlers.NewContactVerification(p.pool, inserter, p.verifier),
		ContactFeeds:        handlers.NewContactFeeds(p.pool, cfg.SecretKey),
		Segments:            handlers.NewSegments(p.pool, cfg.SecretKey, p.leads),
		Labels:              handlers.NewLabels(p.pool),
		Campaigns: handlers.NewCampaigns(p.pool, campaigns,
			handlers.CampaignTracking{Resolver: p.resolver, Host: cfg.TrackingHost}, p.leads),
		Mailboxes: handlers.NewMailboxes(p.pool, keyring, outbox, inserter, handlers.MailboxOptions{
			Dialer: p.dialer, Resolver: p.resolver, MaxMailboxes: cfg.MaxMailboxes,
			TrackingHost: cfg.TrackingHost, AuthGrace: cfg.DomainAuthGrace, Verifier: p.verifier,
			Credentials: p.creds, AppURL: cfg.AppURL, Approvals: p.approvals, Sending: p.sending}),
		CampaignEstimates: handlers.NewCampaignEstimates(p.pool, cfg.DomainAuthGrace),
		CampaignChecks:    handlers.NewCampaignChecks(p.pool),
		CampaignTests:     handlers.NewCampaignTests(p.pool, campaigns, inserter, p.testRuns),
		// Tokens are verified under the deployment secret (and the previous ones, so links in mail sent before a
		// rotation still work); client addresses are hashed under a key derived from the current secret.
		Tracking:    handlers.NewTracking(p.signer, p.networks, hasher, events, p.now, p.geo),
		Unsubscribe: handlers.NewUnsubscribe(unsubscribes),
		Deliverability: handlers.NewDeliverability(ingest.New(ingest.Deps{Pool: p.pool, Outbox: outbox, Engine: p.campaigns,
			Unsubscribe: unsubscribes, Tracking: events, Hasher: hasher, Networks: p.networks})),
		UniboxActions:    handlers.NewUniboxActions(p.pool, inserter, orgs.Edition(cfg.Edition), p.approvals),
		Unibox:           handlers.NewUnibox(p.pool, cfg.SecretKey, inserter, orgs.Edition(cfg.Edition), p.now),
		AgentPolicies:    handlers.NewAgentPolicies(p.pool),
		Approvals:        handlers.NewApprovals(p.pool, p.approvals),
		Runs:             handlers.NewRuns(p.pool, p.runs),
		AppConnections:   handlers.NewAppConnections(apps.NewStore(p.pool, keyring, p.appsEgress, p.apps)),
		CampaignStepRuns: handlers.NewCampaignStepRuns(p.pool, inserter),
		ProductEvents:    handlers.NewProductEvents(p.pool, productevents.New(p.pool, p.now), cfg.SecretKey),

		// The campaign reports read rollups; "today" is the process clock's.
		AnalyticsCampaigns: handlers.NewAnalyticsCampaigns(p.pool, p.now),
		// The organization reports and account analytics read rollups at the process clock (the tests' Clock).
		AnalyticsOrg:      handlers.NewAnalyticsOrg(p.pool, cfg.DomainAuthGrace, p.now),
		AnalyticsAccounts: handlers.NewAnalyticsAccounts(p.pool, cfg.DomainAuthGrace, p.now),
		PostureReports:    handlers.NewPostureReports(p.pool, p.now),
	})
	root, err := assemble(d, handler, handlers.NewSecurity(authn), authn, p.idem)
	if err != nil {
		return nil, err
	}
	// A tool call is served by the whole request path, as the REST call is, so tools are registered only once
	// it is assembled.
	if err := agentTools.RegisterTools(root, APIPrefix); err != nil {
		return nil, err
	}
	return root, nil
}

// mailDialer is how the deployment reaches mailbox servers: the system roots plus OUTFLOW_MAIL_CA_FILE's,
// and OUTFLOW_ALLOW_INSECURE_MAIL's rule for private hosts and plain connections.
func mailDialer(cfg config.Config) (mailbox.Dialer, error) {
	d := mailbox.Dialer{AllowInsecure: cfg.AllowInsecureMail}
	if cfg.MailCAFile == "" {
		return d, nil
	}
	pem, err := os.ReadFile(cfg.MailCAFile)
	if err != nil {
		return d, fmt.Errorf("OUTFLOW_MAIL_CA_FILE: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return d, fmt.Errorf("OUTFLOW_MAIL_CA_FILE %s holds no PEM certificate", cfg.MailCAFile)
	}
	d.TLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return d, nil
}

// MailboxCallbackPath is where the mail providers send the browser back after a mailbox consent; the consent
// apps registered with Google and Microsoft list <OUTFLOW_PUBLIC_URL> plus this path as their redirect URI.
const MailboxCallbackPath = "/v1/emails/onboarding/oauth/callback"

// mailCredentials builds what every mailbox user takes logins from: the keyring for sealed passwords and the
// configured consent providers for OAuth mailboxes.
func mailCredentials(cfg config.Config, pool *pgxpool.Pool, keyring *seal.Keyring) (*mailbox.Credentials, error) {
	providers, err := mailoauth.New(cfg.MailboxGoogle, cfg.MailboxMicrosoft, cfg.PublicURL+MailboxCallbackPath, oidc.NewHTTPClient())
	if err != nil {
		return nil, err
	}
	return &mailbox.Credentials{Keyring: keyring, Pool: pool, Providers: providers}, nil
}

// systemMail is the sender the configuration asks for: the SMTP relay, or the log when none is set.
func systemMail(cfg config.Config, logger *slog.Logger) (sysmail.Sender, error) {
	if cfg.SMTPURL == "" {
		return sysmail.LogSender{Logger: logger}, nil
	}
	return sysmail.NewSMTPSender(cfg.SMTPURL, cfg.MailFrom, nil)
}

// apiHandler is everything the generated server calls: the grouped operations and the raw-response ones.
type apiHandler interface {
	api.Handler
	api.RawHandler
	// MCP is the /v1/mcp endpoint (nil: none).
	MCP() http.Handler
	// OAuthLayer wraps the mux in the OAuth endpoints' HTTP layer (the consent sign-in page, raw request facts).
	OAuthLayer(next http.Handler) http.Handler
}

// assemble wraps an API handler in the request path; tests of the path itself pass their own handler.
func assemble(d deps, handler apiHandler, security api.SecurityHandler, authn *auth.Authenticator, idem *idempotency.Store) (http.Handler, error) {
	notFound := func(w http.ResponseWriter, r *http.Request) {
		apierror.Write(w, r, d.Logger, apierror.NotFound("route_not_found",
			fmt.Sprintf("No operation at %s %s.", r.Method, r.URL.Path)))
	}
	opts := []api.ServerOption{
		api.WithNotFound(notFound),
		api.WithMethodNotAllowed(func(w http.ResponseWriter, r *http.Request, allowed string) {
			w.Header().Set("Allow", allowed)
			apierror.Write(w, r, d.Logger, apierror.New(http.StatusMethodNotAllowed, "method_not_allowed",
				fmt.Sprintf("%s is not allowed here; allowed: %s.", r.Method, allowed)))
		}),
		api.WithErrorHandler(func(_ context.Context, w http.ResponseWriter, r *http.Request, err error) {
			apierror.Write(w, r, d.Logger, handlers.DecodeError(err))
		}),
		api.WithMaxMultipartMemory(32 << 20),
		// The route gate runs first, so an operation not built yet still refuses a caller it would refuse.
		api.WithMiddleware(handlers.Authorize, notImplemented),
	}
	apiServer, err := api.NewServer(handler, handler, security, append(opts, api.WithPathPrefix(APIPrefix))...)
	if err != nil {
		return nil, fmt.Errorf("build API server: %w", err)
	}
	// The same operations mounted at the root serve the few public paths that live outside /v1 (discovery
	// documents, the OAuth consent page, tracking and unsubscribe links); the mux sends only those prefixes.
	rootServer, err := api.NewServer(handler, handler, security, opts...)
	if err != nil {
		return nil, fmt.Errorf("build root API server: %w", err)
	}

	metrics := httpmw.NewMetrics(d.Metrics)
	credentials := &gate{logger: d.Logger, authn: authn, usage: d.Usage,
		routers: []*api.Server{apiServer}, prefix: APIPrefix}
	var v1 http.Handler = apiServer
	v1 = idem.Middleware(principalCredential, v1)
	v1 = credentials.wrap(v1)

	mux := http.NewServeMux()
	mux.Handle(APIPrefix+"/", v1)
	// /v1/mcp is the MCP SDK's streamable HTTP transport, mounted ahead of the generated router (the more
	// specific pattern wins): the contract's mcp_post_message and mcp_open_stream operations describe it, but
	// requests never reach them, and their generated stubs are left as they are.
	if mcp := handler.MCP(); mcp != nil {
		mux.Handle(APIPrefix+"/mcp", credentials.wrap(mcp))
	}
	// /v1/realtime is the WebSocket gateway (realtime/doc.go), beside the generated router like /v1/mcp.
	if rt := d.Realtime; rt != nil {
		mux.Handle(APIPrefix+"/realtime", rt.Credentials(credentials.wrap(rt.Handler(authn))))
	}
	var outside http.Handler = credentials.wrap(rootServer)
	for _, prefix := range RootPrefixes {
		mux.Handle(prefix, outside)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.Handle("GET "+avatar.URLPath, avatar.Dir(d.Config.AvatarDir))
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.Metrics, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", notFound)

	var root http.Handler = mux
	root = handler.OAuthLayer(root)
	root = handlers.RefuseInvalidText(d.Logger, root)
	root = httpmw.LimitBodies(root, bodyLimit(d.Config.MaxBodyBytes))
	root = httpmw.Recover(d.Logger, root)
	root = httpmw.Observe(d.Logger, metrics, operationOf(apiServer, rootServer), root)
	root = httpmw.RequestID(d.Config.EdgeLocation, root)
	return root, nil
}

// ImportBodyBytes caps the body of the contact import routes: a 50 MB file plus its multipart framing. The
// import handlers enforce the 50 MB file limit itself.
const ImportBodyBytes = 51 << 20

// bodyLimit caps every request body at max, except the contact import routes, which take files up to
// ImportBodyBytes.
func bodyLimit(max int64) func(*http.Request) int64 {
	return func(r *http.Request) int64 {
		if strings.HasPrefix(r.URL.Path, APIPrefix+"/contacts/import/") && max < ImportBodyBytes {
			return ImportBodyBytes
		}
		return max
	}
}

// operationOf names the route of a request for logs and metric labels without unbounded cardinality.
func operationOf(routers ...*api.Server) func(*http.Request) string {
	return func(r *http.Request) string {
		switch r.URL.Path {
		case "/healthz":
			return "healthz"
		case "/metrics":
			return "metrics"
		}
		for _, router := range routers {
			if route, ok := router.FindPath(r.Method, r.URL); ok {
				return route.OperationID()
			}
		}
		return "unknown"
	}
}

// notImplemented names the operation in the 501 of every operation whose area has not shipped yet, so
// clients (and the contract-coverage tool) can tell "not yet" from a failure.
func notImplemented(req middleware.Request, next middleware.Next) (middleware.Response, error) {
	resp, err := next(req)
	if errors.Is(err, ht.ErrNotImplemented) {
		return resp, apierror.New(http.StatusNotImplemented, "not_implemented",
			fmt.Sprintf("Operation %s is not implemented yet.", req.OperationID))
	}
	return resp, err
}
