// UI strings in English and Portuguese, one JSON table a language (i18n/en.json, i18n/pt.json: data, kept
// apart from the code). Inside a project its language picks (`auto`: the browser's); elsewhere the
// browser's. tests/backend/test_frontend.py checks that both tables have every key the screens use.
import en from './i18n/en.json' with { type: 'json' };
import pt from './i18n/pt.json' with { type: 'json' };

export const STRINGS = { en, pt };

export function browserLanguage() {
  return (navigator.language || 'en').toLowerCase().startsWith('pt') ? 'pt' : 'en';
}

// t(key, vars, fallback): the string in `lang`, {name} filled from vars; unknown keys fall back to English,
// then to `fallback` (e.g. a stage name the server added later), then to the key.
export function translator(lang) {
  const table = STRINGS[lang] || en;
  return (key, vars = {}, fallback) => {
    const text = table[key] ?? en[key] ?? fallback ?? key;
    return text.replace(/\{(\w+)\}/g, (_, name) => String(vars[name] ?? ''));
  };
}
