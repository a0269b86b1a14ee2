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

// add counts what the send r's opens and clicks count for its contact, times sign; a send outside a campaign,
// or without a contact, counts for none.
func (d *contactDeltas) add(r dbq.RollupEngagementRow, sign int32) {
	if !r.CampaignID.Valid || !r.ContactID.Valid || !r.Opened && !r.Clicked {
		return
	}
	var opens, machineOpens, clicks, machineClicks int32
	if r.Opened {
		opens = sign
		if !r.HumanOpen {
			machineOpens = sign
		}
	}
	if r.Clicked {
		clicks = sign
		if !r.HumanClick {
			machineClicks = sign
		}
	}
	d.CampaignIds, d.ContactIds = append(d.CampaignIds, r.CampaignID.UUID), append(d.ContactIds, r.ContactID.UUID)
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
