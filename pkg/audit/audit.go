// Package audit is the merchant's trail of security-relevant actions: who
// (an API key, a dashboard user, the system) did what (an API key created,
// an integration changed, a user removed, a sign-in failed, a member
// erased, …) to which resource, from which address, and when. An event is
// written by the store in the same transaction as the change it records,
// so a change without its event (or an event without its change) cannot
// be committed. Events name the fields a change touched, never a value of
// a secret.
//
// The actor travels in the request's context: the API's authentication
// and the dashboard's session put it there (WithActor), and a store reads
// it when it writes the event (New). Work without a person or a key behind
// it (the scheduler, the ledger) is the system.
package audit

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The actions, as the API and the dashboard name them.
const (
	APIKeyCreated                = "api_key.created"
	APIKeyRevoked                = "api_key.revoked"
	IntegrationUpdated           = "integration.updated"
	WebhookEndpointCreated       = "webhook_endpoint.created"
	WebhookEndpointUpdated       = "webhook_endpoint.updated"
	WebhookEndpointDeleted       = "webhook_endpoint.deleted"
	WebhookEndpointSecretRotated = "webhook_endpoint.secret_rotated"
	DashboardUserInvited         = "dashboard_user.invited"
	DashboardUserRemoved         = "dashboard_user.removed"
	DashboardUserRoleChanged     = "dashboard_user.role_changed"
	SignInSucceeded              = "sign_in.succeeded"
	SignInFailed                 = "sign_in.failed"
	PasswordChanged              = "password.changed"
	MemberErased                 = "member.erased"
	CampaignUpdated              = "campaign.updated"
	// Reads of personal data and changes of a creator's credential: the
	// member's export, a creator token rotated, a creator profile deleted
	// (its token with it). Their target is the member.
	MemberExported      = "member.exported"
	CreatorTokenRotated = "creator.token_rotated"
	CreatorDeleted      = "creator.deleted"
	// ReconciliationRequested: a run of an integration's reconciliation
	// asked for through the API or the dashboard (target: the
	// integration; details: the run and its window).
	ReconciliationRequested = "reconciliation.requested"
	// PortalSettingsUpdated: the member's portal settings changed (target:
	// the portal; details: the fields changed).
	PortalSettingsUpdated = "portal_settings.updated"
)

// DashboardUserInvitationCancelled is a pending invitation deleted; its
// target is the user it would have made, as the invitation's.
const DashboardUserInvitationCancelled = "dashboard_user.invitation_cancelled"

// Actions are every action, in the order the documentation lists them.
var Actions = []string{
	APIKeyCreated, APIKeyRevoked, IntegrationUpdated,
	WebhookEndpointCreated, WebhookEndpointUpdated, WebhookEndpointDeleted, WebhookEndpointSecretRotated,
	DashboardUserInvited, DashboardUserInvitationCancelled, DashboardUserRemoved, DashboardUserRoleChanged,
	SignInSucceeded, SignInFailed, PasswordChanged, MemberErased, CampaignUpdated,
	MemberExported, CreatorTokenRotated, CreatorDeleted, ReconciliationRequested, PortalSettingsUpdated,
}

// The kinds of actor.
const (
	ActorAPIKey        = "api_key"
	ActorDashboardUser = "dashboard_user"
	ActorSystem        = "system"
	// ActorAnonymous is a client who has not signed in, known only by its
	// address: the actor of a failed sign-in, which anyone can attempt
	// with any e-mail.
	ActorAnonymous = "anonymous"
)

// Actor is who acted: an API key (ID its id, Label its display prefix), a
// dashboard user (ID the user's id, Label the e-mail), the system, or an
// anonymous client.
type Actor struct {
	Type  string
	ID    string
	Label string
}

// System is the actor of work nobody asked for in a request.
var System = Actor{Type: ActorSystem}

// Anonymous is the actor of what a client does before signing in.
var Anonymous = Actor{Type: ActorAnonymous}

// Target is what an action was done to: a type (TargetAPIKey, …) and its
// id as the API shows it.
type Target struct {
	Type string
	ID   string
}

// The kinds of target, and the id each is named by.
const (
	TargetAPIKey          = "api_key"          // the key's UUID, never the key
	TargetIntegration     = "integration"      // the platform's name (pkg/provider)
	TargetWebhookEndpoint = "webhook_endpoint" // wh_…
	TargetDashboardUser   = "dashboard_user"   // the user's UUID (an invitation's is the user's to be)
	TargetMember          = "member"           // mem_…
	TargetCampaign        = "campaign"         // camp_…
	TargetPortal          = "portal"           // "portal": the merchant's one portal
)

// Fields is the details of an update: the names of the fields it changed,
// as the API names them, never their values.
func Fields(names []string) map[string]any { return map[string]any{"fields": names} }

// Event is one entry of the trail.
type Event struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	Action     string
	Actor      Actor
	Target     Target
	IP         string // the client's address (clientip), "" for the system
	// Details holds what the action changed, never a secret's value: the
	// names of the fields an update touched, a new role.
	Details   map[string]any
	CreatedAt time.Time
}

type actorKey struct{}

type origin struct {
	actor Actor
	ip    string
}

// WithActor returns ctx carrying who acts and from which address, for
// the events the stores write under it.
func WithActor(ctx context.Context, a Actor, ip string) context.Context {
	return context.WithValue(ctx, actorKey{}, origin{actor: a, ip: ip})
}

// ActorFrom returns the actor and address ctx carries; the system and ""
// when it carries none.
func ActorFrom(ctx context.Context) (Actor, string) {
	if o, ok := ctx.Value(actorKey{}).(origin); ok {
		return o.actor, o.ip
	}
	return System, ""
}

type clockKey struct{}

// WithClock returns ctx carrying now, the clock of the edge serving the
// request, so that the events written under it are stamped on the same
// clock as everything else the request writes (a test's pinned clock
// included).
func WithClock(ctx context.Context, now func() time.Time) context.Context {
	return context.WithValue(ctx, clockKey{}, now)
}

// Now is the time on the clock ctx carries, or the real time when it
// carries none (a command line).
func Now(ctx context.Context) time.Time {
	if now, ok := ctx.Value(clockKey{}).(func() time.Time); ok && now != nil {
		return now()
	}
	return time.Now()
}

// New returns the event of action on target for merchantID, by the actor
// ctx carries, now; details may be nil.
func New(ctx context.Context, merchantID uuid.UUID, action string, target Target, details map[string]any, now time.Time) Event {
	actor, ip := ActorFrom(ctx)
	if details == nil {
		details = map[string]any{}
	}
	// A time-ordered id (UUIDv7): events of the same instant list in the
	// order they were written.
	return Event{ID: uuid.Must(uuid.NewV7()), MerchantID: merchantID, Action: action, Actor: actor, Target: target, IP: ip,
		Details: details, CreatedAt: now.UTC()}
}

// Filter selects a page of a merchant's events, newest first: of one
// action, or of every one when Action is "".
type Filter struct {
	Action string
	Offset int
	Limit  int
}

// Known reports whether action is one of Actions.
func Known(action string) bool {
	for _, a := range Actions {
		if a == action {
			return true
		}
	}
	return false
}
