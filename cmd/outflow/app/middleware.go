package app

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/httpmw"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/trail/usage"
)

// gate is the credential layer of the request path: it verifies the bearer token once per request, admits
// API keys and OAuth tokens against their per-minute budget, records the outcome in the context (where the
// idempotency layer and the ogen security handler pick it up) and, after the response, queues an API key's
// request for its usage log. Only an admitted request has its multipart text fields checked (parsing one may
// spill it to disk). It rejects nothing itself: public operations ignore credentials, and the
// security handler answers for the protected ones.
//
// A request the server makes to itself (an agent tool call, tools.Definition.Dispatch) carries the admitted
// caller of the request that made it: it is not admitted, charged against the budget or logged a second time.
// A request from the network never carries one.
type gate struct {
	logger  *slog.Logger
	authn   *auth.Authenticator
	usage   *usage.Recorder
	routers []*api.Server
	prefix  string
}

func (g *gate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, err, _ := auth.OutcomeFrom(r.Context()); p != nil && err == nil {
			next.ServeHTTP(w, r)
			return
		}
		token, ok := bearerToken(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		p, err := g.authn.Admit(r.Context(), token)
		if p != nil {
			next := handlers.RefuseInvalidMultipartText(g.logger, next)
			g.serve(w, r, next, p, err, start)
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.WithOutcome(r.Context(), p, err)))
	})
}

// serve runs next for an admitted principal p and logs an API key's request for usage analytics.
func (g *gate) serve(w http.ResponseWriter, r *http.Request, next http.Handler, p *auth.Principal, err error, start time.Time) {
	r = r.WithContext(auth.WithOutcome(r.Context(), p, err))
	if p.Kind != auth.KindAPIKey || g.usage == nil {
		next.ServeHTTP(w, r)
		return
	}
	sw := httpmw.NewStatusWriter(w)
	next.ServeHTTP(sw, r)
	info := reqctx.From(r.Context())
	g.usage.Record(usage.Entry{
		OrganizationID: p.OrganizationID, APIKeyID: p.CredentialID, Endpoint: g.endpoint(r), Method: r.Method,
		IP: info.ClientIP, UserAgent: info.UserAgent, Status: sw.Status(), Latency: time.Since(start), At: start,
	})
}

// endpoint names the route template of r (`/api-keys/{id}`), never the concrete path.
func (g *gate) endpoint(r *http.Request) string {
	for _, router := range g.routers {
		if route, ok := router.FindPath(r.Method, r.URL); ok {
			return route.PathPattern()
		}
	}
	path := strings.TrimPrefix(r.URL.Path, g.prefix)
	if len(path) > 100 {
		path = path[:100]
	}
	return path
}

func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
