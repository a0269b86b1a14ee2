package tracking

import (
	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/engagement"
)

// humanOpens are the engagement touches of evs' human opens of campaign sends (to a contact): what the
// campaign report's countries, clients and devices count. Clicks count once their effects apply (Clicks.Apply),
// since a later click may still re-judge one a burst; machines' events count nowhere. The user agent is the
// stored one, so a rebuild from tracking_events classifies exactly what this did.
func humanOpens(evs []Received, decisions []Decision, tasks map[uuid.UUID]dbq.TrackingTasksRow) []engagement.Touch {
	var out []engagement.Touch
	for i, e := range evs {
		t, ok := tasks[e.Token.TaskID]
		if e.Token.Kind != KindOpen || decisions[i].Verdict != VerdictHuman || !ok || !t.CampaignID.Valid || !t.ContactID.Valid {
			continue
		}
		out = append(out, engagement.Touch{Campaign: t.CampaignID.UUID, Contact: t.ContactID.UUID, Country: e.Country,
			UserAgent: storedUserAgent(e.UserAgent)})
	}
	return out
}
