import { useCallback, useEffect, useRef } from 'preact/hooks';

/**
 * Marks a box that scrolls sideways with where more of it is hidden: `data-more="left"`, `"right"` or
 * `"left right"` (none when everything shows). The stylesheet fades that edge, the cue a clipped tab
 * bar or table needs on a phone. Follows scrolling and any change of the box's or its content's size.
 */
export function followOverflow(element: HTMLElement): () => void {
  const update = () => {
    const more = [
      ...(element.scrollLeft > 1 ? ['left'] : []),
      ...(element.scrollLeft + element.clientWidth < element.scrollWidth - 1 ? ['right'] : []),
    ].join(' ');
    if (more) element.dataset.more = more;
    else delete element.dataset.more;
  };
  update();
  element.addEventListener('scroll', update, { passive: true });
  const sizes = new ResizeObserver(update);
  sizes.observe(element);
  for (const child of element.children) sizes.observe(child);
  return () => {
    element.removeEventListener('scroll', update);
    sizes.disconnect();
  };
}

/** A callback ref for a sideways-scrolling box: it carries the cue while it is on the page. */
export function useScrollCue<T extends HTMLElement>(): (element: T | null) => void {
  const stop = useRef<(() => void) | null>(null);
  return useCallback((element: T | null) => {
    stop.current?.();
    stop.current = element ? followOverflow(element) : null;
  }, []);
}

/**
 * A callback ref for a tab bar: the scroll cue, and the current tab (`aria-current="page"`) kept in
 * view when `current` changes (the last of six tabs is off a phone's screen).
 */
export function useTabBar(current: unknown): (element: HTMLElement | null) => void {
  const bar = useRef<HTMLElement | null>(null);
  const cue = useScrollCue<HTMLElement>();
  useEffect(() => {
    bar.current?.querySelector('[aria-current="page"]')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [current]);
  return useCallback(
    (element: HTMLElement | null) => {
      bar.current = element;
      cue(element);
    },
    [cue],
  );
}
