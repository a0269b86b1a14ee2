package handlers

import (
	"context"
	"io"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// CampaignsListAttachments returns the campaign's files without their content, oldest first.
func (h *Campaigns) CampaignsListAttachments(ctx context.Context, params api.CampaignsListAttachmentsParams) (*api.CampaignAttachmentList, error) {
	var files []campaign.File
	err := h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (err error) {
		files, err = campaign.ListAttachments(ctx, tx, org, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.CampaignAttachmentList{Data: make([]api.CampaignAttachment, len(files))}
	for i, f := range files {
		out.Data[i] = attachmentAPI(params.ID, f)
	}
	return out, nil
}

// CampaignsUploadAttachment stores one uploaded file for the campaign or one of its steps. The part arrives
// buffered by the multipart decoding (see ContactImport); at most one byte past the limit is read from it, so
// a larger file is refused without being copied again.
func (h *Campaigns) CampaignsUploadAttachment(ctx context.Context, req *api.CampaignsUploadAttachmentReq, params api.CampaignsUploadAttachmentParams) (*api.CampaignAttachment, error) {
	up := campaign.Upload{Filename: req.File.Name, ContentType: req.File.Header.Get("Content-Type")}
	if req.File.File != nil {
		data, err := io.ReadAll(io.LimitReader(req.File.File, campaign.MaxAttachmentBytes+1))
		if err != nil {
			return nil, err
		}
		up.Content = data
	}
	if id, ok := req.StepID.Get(); ok {
		up.StepID = uuid.NullUUID{UUID: id, Valid: true}
	}
	var f campaign.File
	err := h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (err error) {
		f, err = h.store.AddAttachment(ctx, tx, org, params.ID, up)
		return err
	})
	if err != nil {
		return nil, err
	}
	res := attachmentAPI(params.ID, f)
	return &res, nil
}

// CampaignsDeleteAttachment removes one file.
func (h *Campaigns) CampaignsDeleteAttachment(ctx context.Context, params api.CampaignsDeleteAttachmentParams) error {
	return h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) error {
		return h.store.DeleteAttachment(ctx, tx, org, params.ID, params.AttachmentId)
	})
}

// attachmentAPI maps a stored file; url stays unset, as files are served only inside the mail they go with.
func attachmentAPI(campaignID uuid.UUID, f campaign.File) api.CampaignAttachment {
	out := api.CampaignAttachment{ID: f.ID, CampaignID: campaignID, StepID: api.NilUUID{Null: true}, Filename: f.Filename,
		Size: api.NewOptInt(int(f.Size)), MimeType: api.NewOptString(f.MimeType), CreatedAt: f.CreatedAt}
	if f.StepID.Valid {
		out.StepID = api.NewNilUUID(f.StepID.UUID)
	}
	return out
}
