import { useState } from 'preact/hooks';
import { Failure, html, Loading, Notice, useLoad } from '../browse/ui.js';
import { ConsoleCreateFeedDocument, ConsoleFeedsDocument, ConsoleRevokeFeedDocument } from '../generated/console/graphql.js';
import { CopyField } from './copy-field.js';
import { describeError } from './errors.js';
import { api } from './session.js';
import { formatDate, formatTime } from './time.js';

/** iCalendar feeds for calendar apps: create (the URL, which holds the feed's token, shown once), list, revoke. */
export function FeedsView() {
  const [load, , reload] = useLoad(() => api(ConsoleFeedsDocument), 'feeds');
  const [url, setUrl] = useState<string | null>(null);
  const [notice, setNotice] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);
  const run = async (action: () => Promise<void>) => {
    try {
      await action();
    } catch (failure) {
      setNotice({ kind: 'error', text: describeError(failure) });
    }
    reload();
  };
  const create = () =>
    run(async () => {
      const { createCalendarFeed } = await api(ConsoleCreateFeedDocument);
      setUrl(new URL(createCalendarFeed.path, location.origin).toString());
    });
  const revoke = (id: string) =>
    run(async () => {
      await api(ConsoleRevokeFeedDocument, { id });
      setNotice({ kind: 'info', text: 'Feed revoked: its URL stopped working.' });
    });

  return html`<section class="panel stack" aria-labelledby="feeds-title">
    <h2 id="feeds-title">Calendar feeds</h2>
    <p class="hint">Subscribe a calendar app (Google, Apple, Outlook, Thunderbird) to this agent’s bookings by URL. The URL reads this calendar and nothing else.</p>
    ${notice ? html`<${Notice} kind=${notice.kind} onClose=${() => setNotice(null)}>${notice.text}<//>` : null}
    ${url ? html`<${CopyField} id="feed-url" label="Feed URL" value=${url} dismissLabel="I have copied the URL" onDismiss=${() => setUrl(null)} />` : null}
    <div class="actions"><button type="button" onClick=${create}>New feed URL</button></div>
    ${load.status === 'loading' ? html`<${Loading} label="Loading feeds…" />` : null}
    ${load.status === 'error' ? html`<${Failure} message=${load.message} retry=${load.retry} />` : null}
    ${load.status === 'ready'
      ? load.data.calendarFeeds.length
        ? html`<ul class="rows">
            ${load.data.calendarFeeds.map(
              (feed) => html`<li class="row" data-testid="feed">
                <div class="row-main"><span>Feed created ${formatDate(new Date(feed.createdAt))} ${formatTime(new Date(feed.createdAt))}</span><code>${feed.id}</code></div>
                <button type="button" class="secondary danger" onClick=${() => revoke(feed.id)}>Revoke</button>
              </li>`,
            )}
          </ul>`
        : html`<p class="empty">No feeds.</p>`
      : null}
  </section>`;
}
