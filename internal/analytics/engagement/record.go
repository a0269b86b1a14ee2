package engagement

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// The dimensions an engagement row is kept under.
const (
	DimensionCountry = "country"
	DimensionClient  = "client"
	DimensionDevice  = "device"
)

// Touch is one human open or click of a campaign send: who (the send's campaign and contact) and what the
// event stored (its country and its stored user agent, which Classify reads).
type Touch struct {
	Campaign, Contact  uuid.UUID
	Country, UserAgent string
	// Clicked is true for a click (which counts as an open too).
	Clicked bool
}

var queries = dbq.New()

// Record writes touches' rows in tx: for each, its country, client and device rows, marked clicked for a click.
// Callers pass people's events only (the package's invariant); a campaign deleted since is skipped.
func Record(ctx context.Context, tx pgx.Tx, org uuid.UUID, touches []Touch) error {
	if len(touches) == 0 {
		return nil
	}
	p := dbq.EngagementUpsertParams{OrganizationID: org}
	for _, t := range touches {
		client, device := Classify(t.UserAgent)
		for _, row := range [][2]string{{DimensionCountry, t.Country}, {DimensionClient, client}, {DimensionDevice, device}} {
			p.CampaignIds, p.ContactIds = append(p.CampaignIds, t.Campaign), append(p.ContactIds, t.Contact)
			p.Dimensions, p.Keys, p.Clicked = append(p.Dimensions, row[0]), append(p.Keys, row[1]), append(p.Clicked, t.Clicked)
		}
	}
	return queries.EngagementUpsert(ctx, tx, p)
}

// RecordClickTx writes the rows of the stored human click event, once its effects apply (the click is then a
// person's for good); a click of a send that is gone, or of no campaign contact, writes none.
func RecordClickTx(ctx context.Context, tx pgx.Tx, org, event uuid.UUID) error {
	rows, err := queries.EngagementOfEvent(ctx, tx, dbq.EngagementOfEventParams{OrganizationID: org, ID: event})
	if err != nil {
		return err
	}
	touches := make([]Touch, len(rows))
	for i, r := range rows {
		touches[i] = Touch{Campaign: r.CampaignID, Contact: r.ContactID, Country: r.Country, UserAgent: r.UserAgent, Clicked: true}
	}
	return Record(ctx, tx, org, touches)
}

// rebuildChunk bounds one upsert of a rebuild (touches, three rows each).
const rebuildChunk = 2000

// Rebuild recomputes org's engagement rows in tx from the source rows: every human open, and every human click
// whose effects applied, of a send that still names its campaign and contact, with the country and user
// agent the event stored. It replaces what was there, so it equals the rows Record and RecordClickTx kept.
func Rebuild(ctx context.Context, tx pgx.Tx, org uuid.UUID) error {
	if err := queries.EngagementClear(ctx, tx, org); err != nil {
		return err
	}
	rows, err := queries.EngagementSources(ctx, tx, org)
	if err != nil {
		return err
	}
	touches := make([]Touch, 0, min(len(rows), rebuildChunk))
	for _, r := range rows {
		touches = append(touches, Touch{Campaign: r.CampaignID, Contact: r.ContactID, Country: r.Country, UserAgent: r.UserAgent, Clicked: r.Clicked})
		if len(touches) == rebuildChunk {
			if err := Record(ctx, tx, org, touches); err != nil {
				return err
			}
			touches = touches[:0]
		}
	}
	return Record(ctx, tx, org, touches)
}
