package handlers

import (
	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/audience/contacts"
)

// searchInput translates the API's contact search body into the contacts package's own input; the rules (and
// the errors naming the body's fields) stay with contacts.ParseSearch.
func searchInput(req api.ContactSearchRequest) contacts.SearchInput {
	in := contacts.SearchInput{
		Query:         req.Query.Value,
		CampaignIDs:   req.CampaignIds,
		LeadStatus:    req.LeadStatus.Value,
		Engagement:    req.Engagement.Value,
		CategoryIDs:   req.CategoryIds,
		SegmentIDs:    req.SegmentIds,
		Verification:  string(req.VerificationStatus.Value),
		MinCampaigns:  optPtr(req.MinCampaigns.Value, req.MinCampaigns.Set),
		MaxCampaigns:  optPtr(req.MaxCampaigns.Value, req.MaxCampaigns.Set),
		Subscribed:    optPtr(req.Subscribed.Value, req.Subscribed.Set),
		CreatedAfter:  optPtr(req.CreatedAfter.Value, req.CreatedAfter.Set),
		CreatedBefore: optPtr(req.CreatedBefore.Value, req.CreatedBefore.Set),
		UpdatedAfter:  optPtr(req.UpdatedAfter.Value, req.UpdatedAfter.Set),
		UpdatedBefore: optPtr(req.UpdatedBefore.Value, req.UpdatedBefore.Set),
		SortBy:        req.SortBy.Value,
		Reverse:       req.Reverse.Value,
	}
	for _, c := range req.CustomFieldFilters {
		in.Custom = append(in.Custom, contacts.CustomFilter{Name: c.Name, Value: c.Value, Type: string(c.Type)})
	}
	return in
}

// selectionInput translates the API's selection object into the contacts package's own input.
func selectionInput(req api.ContactSelection) contacts.SelectionInput {
	return contacts.SelectionInput{Contacts: req.Contacts, All: req.All.Value, Filters: searchInput(req.Filters.Value),
		Exclude: req.Exclude}
}

// bulkUpdateSelectionInput reads the selection part of a bulk update body.
func bulkUpdateSelectionInput(req *api.ContactBulkUpdateRequest) contacts.SelectionInput {
	return contacts.SelectionInput{Contacts: req.Contacts, All: req.All.Value, Filters: searchInput(req.Filters.Value),
		Exclude: req.Exclude}
}

// optPtr is an optional API value as a pointer: nil when the field was not sent.
func optPtr[T any](v T, set bool) *T {
	if !set {
		return nil
	}
	return &v
}
