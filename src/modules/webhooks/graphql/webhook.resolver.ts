import { Arg, Ctx, Directive, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { MAX_WEBHOOKS_PER_AGENT } from '../sql/webhooks-per-agent-limit.trigger.js';
import { DELIVERY_LIST_LIMITS, type WebhookService } from '../webhook.service.js';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import { checkLimit } from '../../../platform/graphql/page-size.js';
import { DeliveryStatusFilter, RegisteredWebhook, RegisterWebhookInput, WebhookDeliveryNode, WebhookNode } from './webhook.types.js';
import { listSize } from '../../../platform/graphql/directives.js';

@Resolver(() => WebhookNode)
export class WebhookResolver {
  constructor(private readonly webhookService: WebhookService) {}

  @Directive(listSize({ assumedSize: MAX_WEBHOOKS_PER_AGENT }))
  @Query(() => [WebhookNode], { description: `The caller's webhooks: at most ${MAX_WEBHOOKS_PER_AGENT}, the number an agent may register.` })
  async webhooks(@Ctx() ctx: PlatformContext): Promise<WebhookNode[]> {
    const actor = await ctx.actor();
    return (await this.webhookService.list(actor)).map(WebhookNode.from);
  }

  @Directive(listSize({ slicingArguments: ['first'], requireOneSlicingArgument: false }))
  @Query(() => [WebhookDeliveryNode], {
    description: `Deliveries of the caller’s webhooks, newest first, with every attempt: \`first\` of them, 1 to ${DELIVERY_LIST_LIMITS.max}.`,
  })
  async webhookDeliveries(
    @Ctx() ctx: PlatformContext,
    @Arg('webhookId', () => ID, { nullable: true }) webhookId?: string | null,
    @Arg('status', () => DeliveryStatusFilter, { nullable: true }) status?: DeliveryStatusFilter | null,
    @Arg('first', () => Int, { defaultValue: DELIVERY_LIST_LIMITS.default }) first = DELIVERY_LIST_LIMITS.default as number,
  ): Promise<WebhookDeliveryNode[]> {
    const actor = await ctx.actor();
    const deliveries = await this.webhookService.deliveries(actor, {
      webhookId: webhookId ?? undefined,
      status: status ?? undefined,
      limit: checkLimit('first', first, DELIVERY_LIST_LIMITS.max),
    });
    return deliveries.map(WebhookDeliveryNode.from);
  }

  @Mutation(() => RegisteredWebhook, { description: `At most ${MAX_WEBHOOKS_PER_AGENT} webhooks per agent; the next is refused with \`limit_exceeded\`.` })
  async registerWebhook(@Arg('input') input: RegisterWebhookInput, @Ctx() ctx: PlatformContext): Promise<RegisteredWebhook> {
    const actor = await ctx.actor();
    const { secret, ...webhook } = await this.webhookService.register(actor, { url: input.url, events: input.events ?? undefined });
    return { webhook: WebhookNode.from(webhook), secret };
  }

  @Mutation(() => Boolean)
  async deleteWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext): Promise<boolean> {
    const actor = await ctx.actor();
    await this.webhookService.delete(actor, id);
    return true;
  }

  @Mutation(() => WebhookNode, { description: 'Turns a disabled endpoint back on.' })
  async enableWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext): Promise<WebhookNode> {
    const actor = await ctx.actor();
    return WebhookNode.from(await this.webhookService.enable(actor, id));
  }

  @Mutation(() => WebhookNode, { description: 'Stops deliveries to an endpoint until enableWebhook; deliveries still due end as failed.' })
  async disableWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext): Promise<WebhookNode> {
    const actor = await ctx.actor();
    return WebhookNode.from(await this.webhookService.disable(actor, id));
  }

  @Mutation(() => WebhookDeliveryNode, { description: 'Sends the event of a delivery again, as a new delivery.' })
  async redeliverWebhook(@Arg('deliveryId', () => ID) deliveryId: string, @Ctx() ctx: PlatformContext): Promise<WebhookDeliveryNode> {
    const actor = await ctx.actor();
    return WebhookDeliveryNode.from(await this.webhookService.redeliver(actor, deliveryId));
  }
}
