// Package replies is the inbound hook the composition root installs on the mail sync (mailsync.OnInbound):
// each new inbound message is classified (internal/inbox/classify), matched to the campaign send it answers
// and applied to its lead by the campaign engine (engine.Answered, which asks back for the verdict under the
// campaign's reply_intent keywords, so campaigns never import the inbox), and the verdict and match are
// stored on the message. What the engine does not own happens here: an unsubscribe request by reply
// (unsubscribe.ByReply), or, for a request that answers no send (a mail client's message to the mailto of our
// List-Unsubscribe header), by the newest campaign send to its sender (unsubscribe.ByAddress); a CRM task
// through the CRMTasks seam, inbox.reply_received, and the inbound_reply and inbound_out_of_office
// notifications.
package replies
