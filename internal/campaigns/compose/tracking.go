package compose

import (
	"strings"

	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

// Tracking is what a campaign send gives Compose so the message can carry the open pixel and tracked links:
// the deployment's signer, where the /t/ endpoints are reached, and the send task the tokens name (its id is
// chosen before composing, sending.Message.ID). A preview or test send passes none and gets the message as
// written.
type Tracking struct {
	// Signer signs the open and click tokens; nil tracks nothing.
	Signer *tracking.Signer
	// BaseURL is the scheme and host the pixel and links point at, without a trailing slash (TrackingBaseURL).
	BaseURL string
	// OrganizationID and TaskID are the send the tokens belong to.
	OrganizationID, TaskID uuid.UUID
}

// TrackingBaseURL is where a campaign message's pixel and tracked links point, so opens and clicks land on
// the most trusted host the sender has proven: the campaign's tracking domain once verified, else the sending
// mailbox's once verified, else the deployment's shared tracking host (OUTFLOW_TRACKING_HOST, a host name),
// else the public URL (OUTFLOW_PUBLIC_URL, a full URL kept as configured). Host names are served over https,
// which List-Unsubscribe and mail clients' link checks expect. c and m may be nil.
func TrackingBaseURL(c *dbq.Campaign, m *dbq.Mailbox, trackingHost, publicURL string) string {
	switch {
	case c != nil && c.TrackingDomain != "" && c.TrackingDomainVerifiedAt != nil:
		return "https://" + c.TrackingDomain
	case m != nil && m.TrackingDomain != "" && m.TrackingDomainVerified:
		return "https://" + m.TrackingDomain
	case trackingHost != "":
		return "https://" + trackingHost
	}
	return strings.TrimRight(publicURL, "/")
}

// tracker is in's tracking when it applies: a campaign send with a signer, and not text_only (which sends no
// HTML part and turns open and click tracking off). Nil otherwise.
func (in Input) tracker() *Tracking {
	if in.Tracking == nil || in.Tracking.Signer == nil || in.Campaign == nil || in.Campaign.TextOnly {
		return nil
	}
	return in.Tracking
}

// clickLinks is the template link rewriter of a link_tracking campaign send: each http(s) link, already
// UTM-tagged, becomes BaseURL/t/c/{token}, the token carrying the link's number and target. A link longer
// than tracking.MaxURLLength, or one the signer refuses, stays as it is: it still works, only untracked.
func (in Input) clickLinks() func(int, string) string {
	t := in.tracker()
	if t == nil || !in.Campaign.LinkTracking {
		return nil
	}
	return func(index int, url string) string {
		if len(url) > tracking.MaxURLLength {
			return url
		}
		token, err := t.Signer.Sign(tracking.Token{Kind: tracking.KindClick, OrganizationID: t.OrganizationID,
			TaskID: t.TaskID, LinkIndex: index, URL: url})
		if err != nil {
			return url
		}
		return t.BaseURL + "/t/c/" + token
	}
}

// pixel adds the open pixel to an open_tracking campaign send's HTML body (before </body> when there is one,
// else at the end); a message without an HTML body, or with open tracking off, is returned as it is.
func (in Input) pixel(html string) (string, error) {
	t := in.tracker()
	if t == nil || !in.Campaign.OpenTracking || strings.TrimSpace(html) == "" {
		return html, nil
	}
	token, err := t.Signer.Sign(tracking.Token{Kind: tracking.KindOpen, OrganizationID: t.OrganizationID, TaskID: t.TaskID})
	if err != nil {
		return "", err
	}
	img := `<img src="` + t.BaseURL + "/t/o/" + token + `" width="1" height="1" alt="" style="display:none">`
	return beforeBodyEnd(html, img), nil
}
