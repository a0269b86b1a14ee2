package engine

import (
	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

// unsubscribe is the unsubscribe input of a message to be sent as task from sender: the campaign's
// unsubscribe line and, when the List-Unsubscribe header or the line's link needs it, the recipient's
// unsubscribe page, signed for the task (one HMAC). Nil when nothing is added; no page without a signer.
func (pl *planner) unsubscribe(sender *dbq.Mailbox, task uuid.UUID) (*compose.Unsubscribe, error) {
	line := pl.overrides.Unsubscribe
	page := pl.row.UnsubscribeHeader || line.Mode == "link"
	if !page && line.Mode != "text" {
		return nil, nil
	}
	u := &compose.Unsubscribe{Line: line}
	if t := pl.e.tracking; page && t.Signer != nil {
		token, err := t.Signer.Sign(tracking.Token{Kind: tracking.KindUnsubscribe, OrganizationID: pl.org, TaskID: task})
		if err != nil {
			return nil, err
		}
		u.URL = compose.TrackingBaseURL(&pl.row, sender, t.Host, t.PublicURL) + "/u/" + token
	}
	return u, nil
}
