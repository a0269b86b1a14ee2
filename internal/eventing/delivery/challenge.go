package delivery

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/trail/audit"
	"github.com/outflowhq/outflow/webhook"
)

// ChallengePrefix starts every verification challenge.
const ChallengePrefix = "whcg_"

// challengeMessage tells whoever reads the request what to do with it.
const challengeMessage = "Outflow webhook verification: answer with any 2xx status to verify this endpoint; endpoints of OAuth apps must also echo the challenge, as the JSON body field challenge or the X-Service-Webhook-Challenge header."

// ChallengeResult is what one verification challenge found.
type ChallengeResult struct {
	EndpointID uuid.UUID
	// Challenge is the whcg_ value sent.
	Challenge   string
	AttemptedAt time.Time
	// Status is the answer's HTTP status (0 when no answer came).
	Status int
	// Excerpt is the answer's first 1024 bytes.
	Excerpt string
	// Echoed says the answer carried the challenge back (body field or header).
	Echoed bool
	// Verified says the endpoint is verified after this challenge.
	Verified   bool
	VerifiedAt *time.Time
	// Reason says why the challenge did not verify the endpoint ("" when it did).
	Reason string
}

// ErrEndpointGone is Challenge's answer for an endpoint that no longer exists.
var ErrEndpointGone = errors.New("delivery: webhook endpoint not found")

// Challenge signs and sends a fresh whcg_ challenge to endpoint id of org and records a success: any 2xx
// verifies a dashboard endpoint; an OAuth app's endpoint must also echo the challenge (JSON body field
// `challenge` or header X-Service-Webhook-Challenge), which confirms ownership of the URL. When onlyURL is
// not empty the challenge goes out only while the endpoint still has that URL. The URL is checked by the
// egress rules again, the request goes through the egress client (no redirects, 15 s), and at most 1024
// bytes of the answer are read. Only database failures are errors; everything the endpoint does is in the
// result.
func (d *Deliverer) Challenge(ctx context.Context, org, id uuid.UUID, onlyURL string) (ChallengeResult, error) {
	var ep dbq.WebhookEndpoint
	var secret string
	err := db.WithOrgTx(ctx, d.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		ep, err = d.queries.WebhookEndpointGet(ctx, tx, dbq.WebhookEndpointGetParams{OrganizationID: org, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrEndpointGone
		}
		if err != nil {
			return err
		}
		if !ep.OauthClientID.Valid {
			secret, err = OpenSecret(d.keyring, org, ep.ID, ep.SecretSealed)
			return err
		}
		app, err := d.queries.WebhookAppGet(ctx, tx, ep.OauthClientID.UUID)
		if err != nil {
			return err
		}
		secret, err = d.apps.OpenWebhookSecret(ep.OauthClientID.UUID, app.WebhookSecretSealed)
		return err
	})
	if err != nil {
		return ChallengeResult{}, err
	}
	if onlyURL != "" && ep.Url != onlyURL {
		return ChallengeResult{}, ErrEndpointGone
	}
	managed := ep.OauthClientID.Valid
	eventID, err := uuid.NewV7()
	if err != nil {
		return ChallengeResult{}, err
	}
	now := d.now().UTC()
	res := ChallengeResult{EndpointID: ep.ID, Challenge: ChallengePrefix + randomToken(24), AttemptedAt: now}
	body, err := json.Marshal(map[string]any{"id": eventID, "event_type": events.WebhookTest, "organization_id": org,
		"created_at": now, "data": map[string]any{"challenge": res.Challenge, "endpoint_id": ep.ID, "message": challengeMessage}})
	if err != nil {
		return ChallengeResult{}, err
	}
	reason := d.sendChallenge(ctx, ep.Url, secret, eventID, body, now, &res)

	ok2xx := res.Status >= 200 && res.Status < 300
	success := ok2xx && (!managed || res.Echoed)
	if ok2xx && managed && !res.Echoed {
		reason = "the answer did not echo the challenge (JSON body field challenge or header " + webhook.ChallengeHeader + "), which endpoints of OAuth apps must do"
	}
	res.VerifiedAt = ep.VerifiedAt
	if success {
		err := db.WithOrgTx(ctx, d.pool, org, func(ctx context.Context, tx pgx.Tx) error {
			row, err := d.queries.WebhookEndpointMarkVerified(ctx, tx, dbq.WebhookEndpointMarkVerifiedParams{
				OrganizationID: org, ID: ep.ID, Url: ep.Url, Now: now, Echoed: res.Echoed})
			if errors.Is(err, pgx.ErrNoRows) {
				// Deleted, or its URL changed while the challenge was out: this answer proves nothing.
				success, reason = false, "the endpoint changed while the challenge was out; send it again"
				return nil
			}
			if err != nil {
				return err
			}
			res.VerifiedAt = row.VerifiedAt
			if ep.VerifiedAt != nil && (ep.OwnershipConfirmed || !res.Echoed) {
				return nil // already verified: a test event, nothing changed
			}
			return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionVerify, Event: "webhook_endpoint.verified", EntityType: audit.EntityWebhook,
				EntityID: ep.ID.String(), Metadata: map[string]any{"url": ep.Url, "ownership_confirmed": row.OwnershipConfirmed}})
		})
		if err != nil {
			return ChallengeResult{}, err
		}
	}
	res.Verified = success || ok2xx && ep.VerifiedAt != nil
	if !success {
		res.Reason = reason
	}
	return res, nil
}

// sendChallenge POSTs the signed challenge and fills res with the answer's status, excerpt and echo; it
// returns why the attempt failed ("" for a 2xx).
func (d *Deliverer) sendChallenge(ctx context.Context, rawURL, secret string, eventID uuid.UUID, body []byte, now time.Time, res *ChallengeResult) string {
	if _, err := egress.ValidateURL(ctx, rawURL, d.egress); err != nil {
		var refused *egress.Error
		if errors.As(err, &refused) {
			return "the URL is not allowed: " + refused.Message
		}
		return egress.Describe(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return "the URL cannot be requested: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhook.UserAgent)
	req.Header.Set(webhook.SignatureHeader, webhook.Sign(secret, now, body))
	req.Header.Set(webhook.EventHeader, string(events.WebhookTest))
	req.Header.Set(webhook.EventIDHeader, eventID.String())
	resp, err := d.client.Do(req)
	if err != nil {
		reason := egress.Describe(err)
		if reason == "timed out" {
			reason = fmt.Sprintf("timed out after %s", d.client.Timeout)
		}
		return reason
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, ExcerptBytes))
	res.Status = resp.StatusCode
	res.Excerpt = strings.ToValidUTF8(string(excerpt), "\uFFFD")
	res.Echoed = echoed(resp.Header.Get(webhook.ChallengeHeader), excerpt, res.Challenge)
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return ""
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return fmt.Sprintf("the endpoint answered %d; redirects are not followed", resp.StatusCode)
	default:
		return fmt.Sprintf("the endpoint answered %d, not 2xx", resp.StatusCode)
	}
}

// echoed reports whether an answer carried the challenge back, in the header or as the JSON body's challenge.
func echoed(header string, body []byte, challenge string) bool {
	if strings.TrimSpace(header) == challenge {
		return true
	}
	var answer struct {
		Challenge string `json:"challenge"`
	}
	return json.Unmarshal(body, &answer) == nil && answer.Challenge == challenge
}

// randomToken is n random bytes, base64url.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms.
	return base64.RawURLEncoding.EncodeToString(b)
}

// ChallengeArgs is the job that challenges an OAuth app's managed endpoint once the authorization that created
// it has committed, so an app that echoes the challenge starts receiving events without anyone asking. It
// goes only to URL (the app's webhook_url when it was authorized); a failure leaves the endpoint unverified,
// and POST /webhooks/{id}/verify can send it again.
type ChallengeArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	EndpointID     uuid.UUID `json:"endpoint_id"`
	URL            string    `json:"url"`
}

// Kind names the challenge job in River.
func (ChallengeArgs) Kind() string { return "webhook_challenge" }

// InsertOpts puts challenges on the webhooks queue; the endpoint's answer, good or bad, ends the job.
func (ChallengeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, MaxAttempts: 3}
}
