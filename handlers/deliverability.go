package handlers

import (
	"context"
	"encoding/json"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/deliverability"
	"github.com/outflowhq/outflow/internal/campaigns/ingest"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Deliverability takes the bounces, complaints, unsubscribes, opens, clicks and replies providers and
// integrations report (POST /v1/deliverability/events), each through the path that owns its kind (see
// package ingest). The route table asks for WRITE_EVENTS or manage_campaigns.
type Deliverability struct {
	ingest *ingest.Service
}

// NewDeliverability builds the endpoint over the ingest service the composition root assembles.
func NewDeliverability(s *ingest.Service) *Deliverability {
	return &Deliverability{ingest: s}
}

// DeliverabilityOpsIngestEvent records and applies one reported event and answers 202. The body's
// idempotency_key, else the Idempotency-Key header, records it once; a repeat is accepted and changes nothing.
func (h *Deliverability) DeliverabilityOpsIngestEvent(ctx context.Context, req *api.IngestDeliverabilityEventRequest, params api.DeliverabilityOpsIngestEventParams) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	meta := make(map[string]any, len(req.Metadata.Value))
	for k, raw := range req.Metadata.Value {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return apierror.BadRequest("invalid_metadata", "metadata."+k+" is not valid JSON.")
		}
		meta[k] = v
	}
	return h.ingest.Ingest(ctx, ingest.Event{OrganizationID: org, Kind: deliverability.Kind(req.EventType),
		Email: req.RecipientEmail, TaskID: nullUUID(req.TaskID), CampaignID: nullUUID(req.CampaignID),
		ContactID: nullUUID(req.ContactID), Provider: req.Provider.Value, Reason: req.Reason.Value,
		IdempotencyKey: req.IdempotencyKey.Or(params.IdempotencyKey.Value), Metadata: meta})
}
