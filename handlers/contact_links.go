package handlers

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/activity"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// checkRefs fails with 400 unknown_<what> unless every id names a row of the organization: a category
// (labels of kind category), a campaign or a segment.
func checkRefs(ctx context.Context, tx pgx.Tx, org uuid.UUID, what string, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	if len(ids) > maxLinkIDs {
		return apierror.BadRequest("invalid_"+what+"s", fmt.Sprintf("Send at most %d %s ids.", maxLinkIDs, what))
	}
	q := dbq.New()
	var found []uuid.UUID
	var err error
	switch what {
	case "category":
		found, err = q.ContactRefCategories(ctx, tx, dbq.ContactRefCategoriesParams{OrganizationID: org, Ids: ids})
	case "campaign":
		found, err = q.ContactRefCampaigns(ctx, tx, dbq.ContactRefCampaignsParams{OrganizationID: org, Ids: ids})
	default:
		found, err = q.ContactRefSegments(ctx, tx, dbq.ContactRefSegmentsParams{OrganizationID: org, Ids: ids})
	}
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !slices.Contains(found, id) {
			return apierror.BadRequest("unknown_"+what, fmt.Sprintf("No %s %s in this organization.", what, id))
		}
	}
	return nil
}

// checkLinkRefs checks the campaigns, categories and segments a contact write links (see checkRefs).
func checkLinkRefs(ctx context.Context, tx pgx.Tx, org uuid.UUID, campaigns, categories, segments []uuid.UUID) error {
	for _, ref := range []struct {
		what string
		ids  []uuid.UUID
	}{{"campaign", campaigns}, {"category", categories}, {"segment", segments}} {
		if err := checkRefs(ctx, tx, org, ref.what, dedupIDs(ref.ids)); err != nil {
			return err
		}
	}
	return nil
}

func dedupIDs(ids []uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// linkCategories adds every category to every contact, set-based, and records category_added activities for
// the links that are new. Campaigns are added through the agent policy gate (leadgate.Gate.Add).
func linkCategories(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids, categories []uuid.UUID) error {
	q := dbq.New()
	if len(categories) > 0 {
		rows, err := q.ContactLinksCategoriesAdd(ctx, tx, dbq.ContactLinksCategoriesAddParams{OrganizationID: org, ContactIds: ids, CategoryIds: categories})
		if err != nil {
			return fmt.Errorf("add categories: %w", err)
		}
		if err := recordPairs(ctx, tx, org, rows, func(r dbq.ContactLinksCategoriesAddRow) linkPair { return linkPair{r.ContactID, r.CategoryID} },
			"category_added", "category_id"); err != nil {
			return err
		}
	}
	return nil
}

// unlinkContacts removes campaigns and categories from contacts and records what was removed.
func unlinkContacts(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids, campaigns, categories []uuid.UUID) error {
	q := dbq.New()
	if len(campaigns) > 0 {
		rows, err := q.ContactLinksCampaignsRemove(ctx, tx, dbq.ContactLinksCampaignsRemoveParams{OrganizationID: org, ContactIds: ids, CampaignIds: campaigns})
		if err != nil {
			return fmt.Errorf("remove campaigns: %w", err)
		}
		if err := recordPairs(ctx, tx, org, rows, func(r dbq.ContactLinksCampaignsRemoveRow) linkPair { return linkPair{r.ContactID, r.CampaignID} },
			"campaign_removed", "campaign_id"); err != nil {
			return err
		}
	}
	if len(categories) > 0 {
		rows, err := q.ContactLinksCategoriesRemove(ctx, tx, dbq.ContactLinksCategoriesRemoveParams{OrganizationID: org, ContactIds: ids, CategoryIds: categories})
		if err != nil {
			return fmt.Errorf("remove categories: %w", err)
		}
		if err := recordPairs(ctx, tx, org, rows, func(r dbq.ContactLinksCategoriesRemoveRow) linkPair { return linkPair{r.ContactID, r.CategoryID} },
			"category_removed", "category_id"); err != nil {
			return err
		}
	}
	return nil
}

// linkPair is one link between a contact and a campaign or category that a write added or removed.
type linkPair struct{ contact, target uuid.UUID }

// recordPairs writes one activity of type typ per target of the rows' links, naming the contacts linked to it;
// key is campaign_id or category_id.
func recordPairs[R any](ctx context.Context, tx pgx.Tx, org uuid.UUID, rows []R, pair func(R) linkPair, typ, key string) error {
	byTarget := map[uuid.UUID][]uuid.UUID{}
	var order []uuid.UUID
	for _, r := range rows {
		p := pair(r)
		if _, ok := byTarget[p.target]; !ok {
			order = append(order, p.target)
		}
		byTarget[p.target] = append(byTarget[p.target], p.contact)
	}
	if len(order) == 0 {
		return nil
	}
	// The timeline shows the campaign's or category's name as it was.
	q := dbq.New()
	names := map[uuid.UUID]string{}
	nameKey := "campaign_name"
	if key == "category_id" {
		nameKey = "category_title"
		titles, err := q.ContactLinksCategoryTitles(ctx, tx, dbq.ContactLinksCategoryTitlesParams{OrganizationID: org, Ids: order})
		if err != nil {
			return err
		}
		for _, t := range titles {
			names[t.ID] = t.Title
		}
	} else {
		campaigns, err := q.ContactLinksCampaignNames(ctx, tx, dbq.ContactLinksCampaignNamesParams{OrganizationID: org, Ids: order})
		if err != nil {
			return err
		}
		for _, c := range campaigns {
			names[c.ID] = c.Name
		}
	}
	for _, target := range order {
		if err := activity.Record(ctx, tx, activity.Entry{ContactIDs: byTarget[target], UserID: actorUser(ctx), Type: typ,
			Metadata: map[string]any{key: target, nameKey: names[target]}}); err != nil {
			return err
		}
	}
	return nil
}

// without returns the ids of a not in b.
func without(a, b []uuid.UUID) []uuid.UUID {
	out := []uuid.UUID{}
	for _, id := range a {
		if !slices.Contains(b, id) {
			out = append(out, id)
		}
	}
	return out
}
