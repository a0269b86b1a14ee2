package contactimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/audience/contactfile"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Limits of an import commit's options.
const (
	// maxLinkIDs caps each of category_ids, campaign_ids and segment_ids: every id becomes one link row per
	// contact of the file.
	maxLinkIDs = 50
	// maxColumn is the highest column index a mapping may name (a workbook's last column).
	maxColumn = 16383
)

// FileError maps a file reading failure to the API's error; the handlers' preview reads files too.
func FileError(err error) error {
	switch {
	case errors.Is(err, contactfile.ErrEmpty):
		return apierror.BadRequest("empty_file", "The file has no rows.")
	case errors.Is(err, contactfile.ErrUnsupported):
		return apierror.BadRequest("unsupported_format", "Upload a CSV or XLSX file: "+err.Error()+".")
	case errors.Is(err, contactfile.ErrUnreadable):
		return apierror.BadRequest("unreadable_file", "The file could not be read: "+err.Error()+".")
	}
	return err
}

// optionsBody is the options part of a commit as sent. Pointers tell a missing field from a zero one.
type optionsBody struct {
	Mapping []struct {
		Index                *int   `json:"index"`
		Target               string `json:"target"`
		CustomKey            string `json:"custom_key"`
		VerificationProvider string `json:"verification_provider"`
	} `json:"mapping"`
	Dedup             string   `json:"dedup"`
	HasHeader         *bool    `json:"has_header"`
	CategoryIDs       []string `json:"category_ids"`
	CampaignIDs       []string `json:"campaign_ids"`
	SegmentIDs        []string `json:"segment_ids"`
	SubscribedDefault *bool    `json:"subscribed_default"`
}

// Options are a commit's validated options.
type Options struct {
	// Columns are the mapped columns of the file (ignored ones left out).
	Columns []contactfile.Column
	// Dedup is what a row whose address the organization already has does: skip, update or create_duplicate.
	Dedup     string
	HasHeader bool
	// CategoryIDs, CampaignIDs and SegmentIDs are linked to every contact of the file (checked by the caller).
	CategoryIDs []uuid.UUID
	CampaignIDs []uuid.UUID
	SegmentIDs  []uuid.UUID
	// SubscribedDefault is the subscription of a new contact whose row does not say.
	SubscribedDefault bool
}

// The dedup modes: what a row whose address the organization already has does.
const (
	dedupSkip            = "skip"
	dedupUpdate          = "update"
	dedupCreateDuplicate = "create_duplicate"
)

// ParseOptions validates the options part; every error is a 400 that leaves nothing written.
func ParseOptions(raw string) (Options, error) {
	var body optionsBody
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return Options{}, apierror.BadRequest("invalid_options", "options must be a JSON object of the import options: "+err.Error()+".")
	}
	if dec.More() {
		return Options{}, apierror.BadRequest("invalid_options", "options must be one JSON object.")
	}
	columns, err := parseColumns(body)
	if err != nil {
		return Options{}, err
	}
	out := Options{Columns: columns, Dedup: body.Dedup, SubscribedDefault: true}
	switch body.Dedup {
	case dedupSkip, dedupUpdate, dedupCreateDuplicate:
	case "":
		return Options{}, apierror.BadRequest("invalid_dedup", "dedup is required: skip, update or create_duplicate.")
	default:
		return Options{}, apierror.BadRequest("invalid_dedup", fmt.Sprintf("dedup %q is not skip, update or create_duplicate.", truncate.Chars(body.Dedup, 40)))
	}
	if body.HasHeader == nil {
		return Options{}, apierror.BadRequest("invalid_options", "has_header is required (true when the file's first row names the columns).")
	}
	out.HasHeader = *body.HasHeader
	if body.SubscribedDefault != nil {
		out.SubscribedDefault = *body.SubscribedDefault
	}
	for _, l := range []struct {
		field, code string
		raw         []string
		ids         *[]uuid.UUID
	}{
		{"category_ids", "unknown_category", body.CategoryIDs, &out.CategoryIDs},
		{"campaign_ids", "unknown_campaign", body.CampaignIDs, &out.CampaignIDs},
		{"segment_ids", "unknown_segment", body.SegmentIDs, &out.SegmentIDs},
	} {
		if *l.ids, err = parseLinkIDs(l.field, l.code, l.raw); err != nil {
			return Options{}, err
		}
	}
	return out, nil
}

// parseColumns validates the mapping: indexes in range and not repeated, known targets, exactly one email
// column, built-in targets at most once, custom columns with a valid key each, providers only on a
// verification_status column and known.
func parseColumns(body optionsBody) ([]contactfile.Column, error) {
	if len(body.Mapping) == 0 {
		return nil, apierror.BadRequest("invalid_mapping", "mapping is required: one entry per column to import, exactly one of them email.")
	}
	var columns []contactfile.Column
	indexes := map[int]bool{}
	targets := map[contactfile.Target]bool{}
	keys := map[string]string{}
	for _, m := range body.Mapping {
		if m.Index == nil || *m.Index < 0 || *m.Index > maxColumn {
			return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Every mapping entry needs an index from 0 to %d.", maxColumn))
		}
		if indexes[*m.Index] {
			return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Column %d is mapped twice.", *m.Index))
		}
		indexes[*m.Index] = true
		c := contactfile.Column{Index: *m.Index, Target: contactfile.Target(m.Target), CustomKey: m.CustomKey,
			Provider: strings.ToLower(strings.TrimSpace(m.VerificationProvider))}
		if key, ok := strings.CutPrefix(m.Target, "custom:"); ok {
			if c.CustomKey != "" && c.CustomKey != key {
				return nil, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Column %d names two custom keys.", c.Index))
			}
			c.Target, c.CustomKey = contactfile.TargetCustom, key
		}
		if !slices.Contains(contactfile.Targets, c.Target) {
			return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Column %d: target %q is not one of ignore, email, first_name, last_name, company, phone, subscribed, categories, verification_status, custom.", c.Index, truncate.Chars(m.Target, 40)))
		}
		switch c.Target {
		case contactfile.TargetIgnore:
			continue
		case contactfile.TargetCustom:
			if c.CustomKey == "" {
				return nil, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Column %d maps to custom without a custom_key.", c.Index))
			}
			if err := contacts.CheckCustomFields(map[string]string{c.CustomKey: ""}); err != nil {
				return nil, err
			}
			if prev, dup := keys[strings.ToLower(c.CustomKey)]; dup {
				return nil, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Custom field %q is mapped from two columns (%s).", c.CustomKey, prev))
			}
			keys[strings.ToLower(c.CustomKey)] = fmt.Sprint(c.Index)
		default:
			if c.CustomKey != "" {
				return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Column %d: custom_key goes only with target custom.", c.Index))
			}
			if targets[c.Target] {
				return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Two columns map to %s; map it from one column.", c.Target))
			}
			targets[c.Target] = true
		}
		if c.Provider != "" {
			if c.Target != contactfile.TargetVerificationStatus {
				return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Column %d: verification_provider goes only with target verification_status.", c.Index))
			}
			if !contacts.KnownProvider(c.Provider) {
				return nil, apierror.BadRequest("unknown_verification_provider", fmt.Sprintf("verification_provider %q is not one of %s.",
					truncate.Chars(c.Provider, 64), strings.Join(contacts.Providers(), ", ")))
			}
		}
		columns = append(columns, c)
	}
	if len(keys) > contacts.MaxCustomFields {
		return nil, apierror.BadRequest("too_many_custom_fields", fmt.Sprintf("A contact has at most %d custom fields.", contacts.MaxCustomFields))
	}
	if !targets[contactfile.TargetEmail] {
		return nil, apierror.BadRequest("invalid_mapping", "Map exactly one column to email.")
	}
	return columns, nil
}

// parseLinkIDs parses one id list of the options, dropping repeats; a non-UUID is code.
func parseLinkIDs(field, code string, raw []string) ([]uuid.UUID, error) {
	if len(raw) > maxLinkIDs {
		return nil, apierror.BadRequest("too_many_ids", fmt.Sprintf("%s takes at most %d ids.", field, maxLinkIDs))
	}
	var out []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, s := range raw {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, apierror.BadRequest(code, fmt.Sprintf("%s: %q is not an id.", field, truncate.Chars(s, 64)))
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}
