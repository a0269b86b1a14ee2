package campaign

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Segment links. A campaign linked to segments takes every member of them as a pending lead when the links
// are set, and EnrollDue (the periodic job) adds those who join later: contacts a dynamic segment's filters
// start matching and new pins. Enrolment only ever adds: a lead already there is left as it is, a contact
// that leaves a segment stays a lead, and unlinking a segment keeps the leads it brought. Unsubscribed
// members are added too, like every other way of adding leads; the engine never sends to them and their lead
// status reads unsubscribed. A member whose joining an approval holds (an agent's write made it a member:
// held_leads.via_segment, package leadgate) is skipped while the approval is pending, and after a denial or
// an expiry while it stays a member.
const (
	// MaxSegments is how many segments one campaign may be linked to (as many as a contact search names).
	MaxSegments = contacts.MaxSegmentIDs
	// SegmentEnrollInterval is how often the periodic job looks for new members of linked segments.
	SegmentEnrollInterval = 5 * time.Minute
	// SegmentEnrollBatch is how many campaigns one run of the job enrolls at most; the rest (the most
	// recently enrolled) wait for the next run.
	SegmentEnrollBatch = 200
)

// setSegments replaces a campaign's segment links with ids, each of which must be a segment of org, and
// enrolls the members of the linked segments.
func setSegments(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID, ids []uuid.UUID) error {
	ids = dedupe(ids)
	if len(ids) > MaxSegments {
		return apierror.BadRequest("invalid_segment_ids", fmt.Sprintf("segment_ids takes at most %d segments.", MaxSegments))
	}
	found, err := queries.CampaignSegmentsExisting(ctx, tx, dbq.CampaignSegmentsExistingParams{OrganizationID: org, SegmentIds: ids})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !slices.Contains(found, id) {
			return apierror.BadRequest("invalid_segment_ids", fmt.Sprintf("segment_ids: %s is not a segment of this organization.", id))
		}
	}
	if err := queries.CampaignSegmentsRetain(ctx, tx, dbq.CampaignSegmentsRetainParams{OrganizationID: org, CampaignID: campaign, KeepIds: ids}); err != nil {
		return err
	}
	if err := queries.CampaignSegmentsAdd(ctx, tx, dbq.CampaignSegmentsAddParams{OrganizationID: org, CampaignID: campaign, SegmentIds: ids}); err != nil {
		return err
	}
	_, err = Enroll(ctx, tx, org, campaign)
	return err
}

// segmentsOf reads the segment links of campaigns, in the order they were linked.
func segmentsOf(ctx context.Context, tx pgx.Tx, org uuid.UUID, campaigns []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error) {
	rows, err := queries.CampaignSegmentsOf(ctx, tx, dbq.CampaignSegmentsOfParams{OrganizationID: org, CampaignIds: campaigns})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID][]uuid.UUID, len(campaigns))
	for _, r := range rows {
		out[r.CampaignID] = append(out[r.CampaignID], r.SegmentID)
	}
	return out, nil
}

// heldOutSQL is the condition that a pair (contact %[1]s, campaign %[2]s; $1 the organization) is not held:
// no approval that is pending, denied or expired holds it as a segment's new member (held_leads.via_segment,
// written by package leadgate when an agent's write made the contact a member; approving added the lead).
const heldOutSQL = `NOT EXISTS (SELECT 1 FROM held_leads h JOIN approvals a ON a.organization_id = h.organization_id AND a.id = h.approval_id
  WHERE h.organization_id = $1 AND h.campaign_id = %[2]s AND h.contact_id = %[1]s AND h.via_segment AND a.status NOT IN ('approved', 'executed'))`

// Enroll adds every current member of the campaign's linked segments as a pending lead (due now), each
// contact once, in one INSERT ... SELECT over the contacts package's membership query; existing leads are
// untouched, and so are members an approval holds (heldOutSQL). Before that, the held rows of decided
// approvals whose contacts are no longer members go: a contact refused while a member is enrolled once it
// leaves and joins again. It answers how many leads were added and records the links as enrolled.
func Enroll(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID) (int64, error) {
	links, err := segmentsOf(ctx, tx, org, []uuid.UUID{campaign})
	if err != nil {
		return 0, err
	}
	ids := links[campaign]
	if len(ids) == 0 {
		return 0, nil
	}
	members, args, err := contacts.MembersSQL(ctx, tx, org, ids)
	if err != nil {
		return 0, err
	}
	// args[0] is the query mode; the statement's parameters are args[1:], so the campaign is the next one.
	args = append(args, campaign)
	c := fmt.Sprintf("$%d::uuid", len(args)-1)
	if _, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM held_leads h USING approvals a
WHERE h.organization_id = $1 AND h.campaign_id = %s AND h.via_segment
  AND a.organization_id = h.organization_id AND a.id = h.approval_id AND a.status <> 'pending'
  AND NOT EXISTS (SELECT 1 FROM (%s) m WHERE m.id = h.contact_id)`, c, members), args...); err != nil {
		return 0, fmt.Errorf("release held segment members: %w", err)
	}
	tag, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO campaign_leads (organization_id, campaign_id, contact_id)
SELECT $1, %s, m.id FROM (%s) m
WHERE %s
ON CONFLICT DO NOTHING`, c, members, fmt.Sprintf(heldOutSQL, "m.id", c)), args...)
	if err != nil {
		return 0, fmt.Errorf("enroll segment members: %w", err)
	}
	if err := queries.CampaignSegmentsEnrolled(ctx, tx, dbq.CampaignSegmentsEnrolledParams{OrganizationID: org, CampaignID: campaign}); err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// Joining counts the current members of segments (linked to the campaign or not) who are not leads of the
// campaign yet and whom no approval holds (heldOutSQL): the leads linking them would add now.
func Joining(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID, segments []uuid.UUID) (int, error) {
	if len(segments) == 0 {
		return 0, nil
	}
	members, args, err := contacts.MembersSQL(ctx, tx, org, segments)
	if err != nil {
		return 0, err
	}
	// args[0] is the query mode; the statement's parameters are args[1:], so the campaign is the next one.
	args = append(args, campaign)
	c := fmt.Sprintf("$%d::uuid", len(args)-1)
	var n int
	err = tx.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM (%s) m
WHERE NOT EXISTS (SELECT 1 FROM campaign_leads l WHERE l.organization_id = $1 AND l.campaign_id = %s AND l.contact_id = m.id)
  AND %s`, members, c, fmt.Sprintf(heldOutSQL, "m.id", c)), args...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count joining segment members: %w", err)
	}
	return n, nil
}

// Link adds links from the campaign to those of segments that still exist, keeping its other links, and
// enrolls the members of its linked segments (Enroll). It answers the segments linked and the leads added.
func Link(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID, segments []uuid.UUID) ([]uuid.UUID, int64, error) {
	found, err := queries.CampaignSegmentsExisting(ctx, tx, dbq.CampaignSegmentsExistingParams{OrganizationID: org, SegmentIds: dedupe(segments)})
	if err != nil || len(found) == 0 {
		return nil, 0, err
	}
	links, err := segmentsOf(ctx, tx, org, []uuid.UUID{campaign})
	if err != nil {
		return nil, 0, err
	}
	if n := len(dedupe(append(links[campaign], found...))); n > MaxSegments {
		return nil, 0, apierror.BadRequest("invalid_segment_ids", fmt.Sprintf("The campaign would link %d segments; at most %d.", n, MaxSegments))
	}
	if err := queries.CampaignSegmentsAdd(ctx, tx, dbq.CampaignSegmentsAddParams{OrganizationID: org, CampaignID: campaign, SegmentIds: found}); err != nil {
		return nil, 0, err
	}
	n, err := Enroll(ctx, tx, org, campaign)
	return found, n, err
}

// EnrollDue is the periodic enrolment: across organizations (through the narrow campaign_segments_due
// read) it takes up to limit campaigns whose links were last enrolled before before, longest waiting first,
// and enrolls each in its organization's transaction. Every campaign with links takes part whatever its
// status (a campaign that is deleted has no links left). It answers how many leads were added.
func EnrollDue(ctx context.Context, pool *pgxpool.Pool, before time.Time, limit int) (int64, error) {
	due, err := queries.CampaignSegmentsDue(ctx, pool, dbq.CampaignSegmentsDueParams{EnrolledBefore: before, RowLimit: int32(min(limit, 1<<30))})
	if err != nil {
		return 0, fmt.Errorf("campaigns due for segment enrolment: %w", err)
	}
	var added int64
	for _, d := range due {
		err := db.WithOrgTx(ctx, pool, d.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			n, err := Enroll(ctx, tx, d.OrganizationID, d.CampaignID)
			added += n
			return err
		})
		if err != nil {
			return added, err
		}
	}
	return added, nil
}
