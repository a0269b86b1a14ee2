package rollup

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// contactDeltas gathers what sends' changed opens and clicks move on their campaign contacts' rows
// (analytics_campaign_contacts), applied in one statement.
type contactDeltas dbq.RollupContactsApplyParams

// add counts what the send e's opens and clicks count for its contact, times sign; a send outside a campaign,
// or without a contact, counts for none.
func (d *contactDeltas) add(e Engagement, sign int32) {
	if e.Campaign == uuid.Nil || e.Contact == uuid.Nil || !e.Opened && !e.Clicked {
		return
	}
	var opens, machineOpens, clicks, machineClicks int32
	if e.Opened {
		opens = sign
		if !e.HumanOpen {
			machineOpens = sign
		}
	}
	if e.Clicked {
		clicks = sign
		if e.HumanClicks == 0 {
			machineClicks = sign
		}
	}
	d.CampaignIds, d.ContactIds = append(d.CampaignIds, e.Campaign), append(d.ContactIds, e.Contact)
	d.Opens, d.MachineOpens = append(d.Opens, opens), append(d.MachineOpens, machineOpens)
	d.Clicks, d.MachineClicks = append(d.Clicks, clicks), append(d.MachineClicks, machineClicks)
}

func (d *contactDeltas) apply(ctx context.Context, tx pgx.Tx, org uuid.UUID) error {
	if len(d.CampaignIds) == 0 {
		return nil
	}
	d.OrganizationID = org
	return queries.RollupContactsApply(ctx, tx, dbq.RollupContactsApplyParams(*d))
}
