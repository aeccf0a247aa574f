import { Field, ID, ObjectType } from 'type-graphql';
import type { CalendarFeedView } from '../calendar-feed.service.js';

@ObjectType('CalendarFeed', { simpleResolvers: true, description: "A read-only iCalendar feed of the agent's bookings, for calendar apps." })
export class CalendarFeedNode {
  @Field(() => ID)
  id!: string;

  @Field()
  createdAt!: Date;

  static from(view: CalendarFeedView): CalendarFeedNode {
    return Object.assign(new CalendarFeedNode(), view);
  }
}

@ObjectType({ simpleResolvers: true })
export class CreatedCalendarFeed {
  @Field(() => CalendarFeedNode)
  feed!: CalendarFeedNode;

  @Field({ description: '`cal_…`: reads this agent’s feed and nothing else; not an API token. Shown only here.' })
  token!: string;

  @Field({ description: 'Where calendar apps subscribe: `/api/agents/{id}/calendar.ics?token=…`, relative to the gateway.' })
  path!: string;
}
