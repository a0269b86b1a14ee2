package contacts

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Limits of a search body.
const (
	MaxQueryLen      = 200
	MaxCustomFilters = 20
	MaxFilterIDs     = 100
	MaxSegmentIDs    = 20
)

// Sort keys of a search. Any other sort_by value falls back to SortCreatedAt.
const (
	SortCreatedAt     = "created_at"
	SortUpdatedAt     = "updated_at"
	SortFirstName     = "first_name"
	SortLastName      = "last_name"
	SortEmail         = "email"
	SortCampaignCount = "campaign_count"
)

var sortKeys = []string{SortCreatedAt, SortUpdatedAt, SortFirstName, SortLastName, SortEmail, SortCampaignCount}

// LeadStatuses are the lead_status values, highest priority first (see LeadStatusSQL).
var LeadStatuses = []string{"unsubscribed", "bounced", "replied", "failed", "completed", "paused", "active", "undeliverable", "pending"}

// Engagements are the engagement filter values.
var Engagements = []string{"opened", "not_opened", "clicked", "not_clicked", "replied", "not_replied", "bounced"}

// CustomFilter is one custom-field condition; Type is equal, starts_with, ends_with or contains, all
// case-insensitive.
type CustomFilter struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  string `json:"type"`
}

// Filter is a parsed, validated contact search body. The zero Filter matches every contact, newest first.
// It is also the stored form of a dynamic segment (JSON), so its field names are the API's.
type Filter struct {
	Query         string         `json:"query,omitempty"`
	Custom        []CustomFilter `json:"custom_field_filters,omitempty"`
	CampaignIDs   []uuid.UUID    `json:"campaign_ids,omitempty"`
	LeadStatus    string         `json:"lead_status,omitempty"`
	Engagement    string         `json:"engagement,omitempty"`
	CategoryIDs   []uuid.UUID    `json:"category_ids,omitempty"`
	SegmentIDs    []uuid.UUID    `json:"segment_ids,omitempty"`
	Verification  string         `json:"verification_status,omitempty"`
	MinCampaigns  *int           `json:"min_campaigns,omitempty"`
	MaxCampaigns  *int           `json:"max_campaigns,omitempty"`
	Subscribed    *bool          `json:"subscribed,omitempty"`
	CreatedAfter  *time.Time     `json:"created_after,omitempty"`
	CreatedBefore *time.Time     `json:"created_before,omitempty"`
	UpdatedAfter  *time.Time     `json:"updated_after,omitempty"`
	UpdatedBefore *time.Time     `json:"updated_before,omitempty"`
	// Sort is one of the Sort* keys; Ascending is the API's reverse.
	Sort      string `json:"sort_by,omitempty"`
	Ascending bool   `json:"reverse,omitempty"`
	// AnySegmentIDs matches the members of at least one of these segments (a union, where SegmentIDs is an
	// intersection), so a contact in several counts once: a campaign's audience. The search body has no such
	// field (ParseSearch never sets it), so no stored segment names it.
	AnySegmentIDs []uuid.UUID `json:"any_segment_ids,omitempty"`
	// resolved holds the trigram lookups Resolve made in the current transaction; nil looks up per statement.
	resolved *resolved
}

// OneCampaign returns the campaign when the filter names exactly one: lead_status, engagement, lead counts and
// each contact's campaign_lead refer to it.
func (f Filter) OneCampaign() (uuid.UUID, bool) {
	if len(f.CampaignIDs) == 1 {
		return f.CampaignIDs[0], true
	}
	return uuid.Nil, false
}

// Empty reports whether the filter selects every contact (its sort does not matter).
func (f Filter) Empty() bool {
	g := f
	g.Sort, g.Ascending = "", false
	b, _ := json.Marshal(g)
	return string(b) == "{}"
}

// SortOrder names the sort and direction; cursors are bound to it.
func (f Filter) SortOrder() string {
	dir := "desc"
	if f.Ascending {
		dir = "asc"
	}
	return "contacts:" + f.Sort + ":" + dir
}

func parseIDs(field string, raw []string, max int) ([]uuid.UUID, error) {
	if len(raw) > max {
		return nil, apierror.BadRequest("invalid_"+field, fmt.Sprintf("%s takes at most %d ids.", field, max))
	}
	out := make([]uuid.UUID, 0, len(raw))
	for _, r := range raw {
		id, err := uuid.Parse(strings.TrimSpace(r))
		if err != nil {
			return nil, apierror.BadRequest("invalid_"+field, fmt.Sprintf("%s: %q is not a UUID.", field, truncate.Chars(r, 64)))
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// SearchInput is a contact search body as a caller received it, before any check: the fields of the API's
// search request in plain Go types (nil or empty for a field not sent). Handlers translate the request into
// it; ParseSearch holds the rules.
type SearchInput struct {
	Query        string
	Custom       []CustomFilter
	CampaignIDs  []string
	LeadStatus   string
	Engagement   string
	CategoryIDs  []string
	SegmentIDs   []uuid.UUID
	Verification string
	MinCampaigns *int
	MaxCampaigns *int
	Subscribed   *bool
	// CreatedAfter, CreatedBefore, UpdatedAfter and UpdatedBefore bound the contact's timestamps.
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	UpdatedAfter  *time.Time
	UpdatedBefore *time.Time
	// SortBy is a Sort* key; any other value sorts by SortCreatedAt. Reverse sorts ascending.
	SortBy  string
	Reverse bool
}

// ParseSearch validates a search body (the API's names and errors) into a Filter.
func ParseSearch(req SearchInput) (Filter, error) {
	var f Filter
	var err error
	f.Query = strings.TrimSpace(req.Query)
	if utf8.RuneCountInString(f.Query) > MaxQueryLen {
		return f, apierror.BadRequest("invalid_query", fmt.Sprintf("query must be at most %d characters.", MaxQueryLen))
	}
	if len(req.Custom) > MaxCustomFilters {
		return f, apierror.BadRequest("invalid_custom_field_filters", fmt.Sprintf("Send at most %d custom_field_filters.", MaxCustomFilters))
	}
	for _, c := range req.Custom {
		if !ValidCustomKey(c.Name) {
			return f, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Custom field name %q may use only letters, digits, underscore, space and dash (1 to %d characters).", truncate.Chars(c.Name, 80), MaxCustomKeyLen))
		}
		if utf8.RuneCountInString(c.Value) > MaxCustomValueLen {
			return f, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Custom field filter value for %q is longer than %d characters.", c.Name, MaxCustomValueLen))
		}
		f.Custom = append(f.Custom, c)
	}
	if f.CampaignIDs, err = parseIDs("campaign_ids", req.CampaignIDs, MaxFilterIDs); err != nil {
		return f, err
	}
	if f.CategoryIDs, err = parseIDs("category_ids", req.CategoryIDs, MaxFilterIDs); err != nil {
		return f, err
	}
	if len(req.SegmentIDs) > MaxSegmentIDs {
		return f, apierror.BadRequest("invalid_segment_ids", fmt.Sprintf("segment_ids takes at most %d ids.", MaxSegmentIDs))
	}
	for _, id := range req.SegmentIDs {
		if !slices.Contains(f.SegmentIDs, id) {
			f.SegmentIDs = append(f.SegmentIDs, id)
		}
	}
	if v := req.LeadStatus; v != "" {
		if !slices.Contains(LeadStatuses, v) {
			return f, apierror.BadRequest("invalid_lead_status", fmt.Sprintf("lead_status must be one of %s.", strings.Join(LeadStatuses, ", ")))
		}
		f.LeadStatus = v
	}
	if v := req.Engagement; v != "" {
		if !slices.Contains(Engagements, v) {
			return f, apierror.BadRequest("invalid_engagement", fmt.Sprintf("engagement must be one of %s.", strings.Join(Engagements, ", ")))
		}
		f.Engagement = v
	}
	if (f.LeadStatus != "" || f.Engagement != "") && len(f.CampaignIDs) != 1 {
		return f, apierror.BadRequest("lead_filter_requires_campaign", "lead_status and engagement need exactly one campaign in campaign_ids.")
	}
	f.Verification = req.Verification
	f.MinCampaigns, f.MaxCampaigns, f.Subscribed = req.MinCampaigns, req.MaxCampaigns, req.Subscribed
	f.CreatedAfter, f.CreatedBefore = req.CreatedAfter, req.CreatedBefore
	f.UpdatedAfter, f.UpdatedBefore = req.UpdatedAfter, req.UpdatedBefore
	f.Sort = SortCreatedAt
	if v := req.SortBy; slices.Contains(sortKeys, v) {
		f.Sort = v
	}
	f.Ascending = req.Reverse
	return f, nil
}

// DecodeStored reads a Filter stored as JSON (a dynamic segment's definition).
func DecodeStored(raw []byte) (Filter, error) {
	var f Filter
	if err := json.Unmarshal(raw, &f); err != nil {
		return f, fmt.Errorf("decode stored contact filter: %w", err)
	}
	if f.Sort == "" {
		f.Sort = SortCreatedAt
	}
	return f, nil
}
