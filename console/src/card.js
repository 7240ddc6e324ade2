// Adaptive Cards rendered by Microsoft's own renderer (the adaptivecards
// package), with a host config close to Teams' light theme.
import * as AC from 'adaptivecards';
import { useEffect, useRef } from 'preact/hooks';
import { html } from './html.js';

const hostConfig = new AC.HostConfig({
  fontFamily: "'Segoe UI', system-ui, -apple-system, sans-serif",
  spacing: { small: 4, default: 8, medium: 16, large: 20, extraLarge: 24, padding: 16 },
  supportsInteractivity: true,
  containerStyles: {
    default: {
      backgroundColor: '#FFFFFF',
      foregroundColors: {
        default: { default: '#242424', subtle: '#616161' },
        accent: { default: '#4F52B2', subtle: '#4F52B2' },
        good: { default: '#0B6A0B', subtle: '#0B6A0B' },
        warning: { default: '#835B00', subtle: '#835B00' },
        attention: { default: '#C4314B', subtle: '#A4262C' },
      },
    },
    emphasis: {
      backgroundColor: '#F5F5F5',
      foregroundColors: {
        default: { default: '#242424', subtle: '#616161' },
        accent: { default: '#4F52B2', subtle: '#4F52B2' },
      },
    },
  },
  actions: { actionsOrientation: 'horizontal', actionAlignment: 'left', buttonSpacing: 8, maxActions: 6 },
});

// AdaptiveCard renders payload; onAction gets each Action.Submit's data,
// the card's input values merged in, as Teams would send them.
export function AdaptiveCard({ payload, onAction, label }) {
  const ref = useRef(null);
  useEffect(() => {
    const card = new AC.AdaptiveCard();
    card.hostConfig = hostConfig;
    card.onExecuteAction = (action) => {
      if (action instanceof AC.SubmitAction && onAction) onAction(action.data || {}, action.title);
    };
    const box = ref.current;
    try {
      card.parse(payload);
      const el = card.render();
      box.replaceChildren(el || document.createTextNode('This card renders nothing.'));
    } catch (err) {
      box.replaceChildren(document.createTextNode(`This card cannot be rendered: ${err.message}`));
    }
  }, [JSON.stringify(payload), onAction]);
  return html`<div class="ac-host" role="region" aria-label=${label || 'Adaptive card'} ref=${ref}></div>`;
}
