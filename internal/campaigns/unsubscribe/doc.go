// Package unsubscribe applies a recipient's unsubscribe request from a campaign message: the one-click POST a
// mailbox provider sends from the List-Unsubscribe and List-Unsubscribe-Post headers (RFC 8058), and the
// confirm form of the unsubscribe page. The tracking handlers answer the HTTP; everything the request
// changes happens here.
//
// Invariants:
//   - A request is honoured only with a valid unsubscribe token (tracking.KindUnsubscribe, checked in memory
//     before any database read) naming a campaign send of its organization; anything else is 404
//     unsubscribe_link_not_found, the same answer for a forged, altered, foreign-kind or unknown token.
//     Every read and write runs in that organization's transaction (row-level security applies).
//   - Reading the recipient for the page (Recipient) changes nothing, so link scanners and prefetchers that
//     load the page unsubscribe no one.
//   - Unsubscribe does all of its work in one transaction, before the request is answered: the contact's
//     subscribed becomes false; every lead of the contact, in every campaign, stops with its queued send
//     cancelled and its step and place in the day given back (engine.Unsubscribed); with the send's
//     campaign's bounce_pipeline enabled and auto_suppress_on_unsubscribe on (the defaults), the address is
//     suppressed for good (source unsubscribe, the campaign named); one deliverability_events row records it
//     (event_type unsubscribe, source one_click or link, matched_by token); campaign.unsubscribed is emitted
//     {campaign_id, contact_id, contact_email, source}.
//   - A reply that asks to be unsubscribed does the same in the transaction that stores it (ByReply, source
//     reply). A request that answers no send (a mail client's message to the mailto of our List-Unsubscribe
//     header, which names no Message-ID; a new email asking to be removed) is taken for the newest campaign
//     send to a contact with its sender's address, one from the mailbox it reached first (LatestSend), and
//     does the same (ByAddress), recorded matched_by address with the inbound message; when the contact is
//     unsubscribed already it changes nothing. An address the organization never sent a campaign message to
//     is no one's unsubscribe.
//   - A request is a repeat when this send's unsubscribe is recorded and its contact is still unsubscribed
//     (or gone): it changes nothing and raises nothing, and is answered as the first was. Requests with one
//     token take turns on the send's row, so two at once are one unsubscribe and one repeat. A contact who
//     subscribed again and follows the link again is unsubscribed again.
//   - The address suppressed and recorded is the one the message went to, even when the contact's address
//     has changed since; a send whose contact was deleted still suppresses and records it.
//   - Recipients are not actors: nothing here writes the audit log.
package unsubscribe
