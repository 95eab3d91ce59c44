import type { Page } from './api.js';
import { el, replace } from './dom.js';

/**
 * Cursor paging (CONTRACT §6) for a list: Previous and Next move through the pages seen so far
 * and the next cursor; `reset` starts again from the newest (after a filter changes).
 */
export const paged = <T>(into: HTMLElement, load: (cursor: string | null) => Promise<Page<T>>, draw: (items: T[]) => HTMLElement) => {
  const cursors: (string | null)[] = [null];
  let index = 0;
  const show = async () => {
    const page = await load(cursors[index] ?? null);
    cursors[index + 1] = page.nextCursor;
    cursors.length = index + 2;
    const previous = el('button', { type: 'button', class: 'secondary', disabled: index === 0 }, 'Previous page');
    const next = el('button', { type: 'button', class: 'secondary', disabled: page.nextCursor === null }, 'Next page');
    previous.addEventListener('click', () => ((index -= 1), void show()));
    next.addEventListener('click', () => ((index += 1), void show()));
    replace(into, draw(page.items), el('div', { class: 'pager' }, previous, el('span', {}, `Page ${index + 1}`), next));
  };
  return {
    reset: () => {
      cursors.length = 1;
      index = 0;
      return show();
    },
  };
};
