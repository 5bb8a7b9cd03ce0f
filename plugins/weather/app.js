// weather, a Palisade plugin written in JavaScript: the current weather and the next day's
// forecast for a city, from OpenWeatherMap's API with the key the server's configuration gives
// it (a secret), over the standard fetch(). The forecast has an MCP Apps view: a chart that
// hosts able to show one draw from its result (forecast-view.js).
// Build it with the JavaScript SDK:
//
//   node sdk-guest/js/bin/palisade-js.mjs build plugins/weather/app.js -o weather.wasm
//
// It needs, in the server's configuration (plugins/palisade.toml has them):
//   network = ["api.openweathermap.org"]
//   [plugins.weather.secrets]
//   OPENWEATHER_API_KEY = { env = "OPENWEATHER_API_KEY" }
// and, to use another server with the same API, `[plugins.weather.config] api_url = "..."`.

import { Plugin, ToolError, config, secret, toolResult } from '@palisade/sdk';
import { FORECAST_VIEW } from './forecast-view.js';

const DEFAULT_API = 'https://api.openweathermap.org';
const TIMEOUT_MS = 10_000;

const plugin = new Plugin();

// The arguments both tools take.
const CITY = { type: 'string', description: 'The city, optionally with its country code: "Paris" or "Paris,FR"', minLength: 1 };
const UNITS = { type: 'string', enum: ['metric', 'imperial'], default: 'metric' };

/** GETs `path` of the weather API with `query` and the key; its JSON, or a ToolError saying why not. */
async function ask(path, query, city) {
  const url = new URL(path, config('api_url') ?? DEFAULT_API);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  url.searchParams.set('appid', secret('OPENWEATHER_API_KEY'));
  let response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    const why = error?.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : error?.message ?? String(error);
    throw new ToolError(`cannot reach the weather service at ${url.origin}: ${why}`);
  }
  if (response.status === 404) {
    throw new ToolError(`no city called "${city}" (try adding its country code: "${city},FR")`);
  }
  if (response.status === 401) {
    throw new ToolError('the weather service refused the API key (OPENWEATHER_API_KEY)');
  }
  if (!response.ok) {
    throw new ToolError(`the weather service answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
  return response.json();
}

plugin.tool(
  {
    name: 'current_weather',
    description: 'The weather now in a city: conditions, temperature, humidity and wind',
    input: {
      city: CITY,
      units: { ...UNITS, description: 'Celsius and m/s (metric) or Fahrenheit and mph (imperial)' },
    },
    output: {
      city: { type: 'string', description: 'The city the API matched' },
      country: { type: 'string', description: 'Its country code' },
      conditions: { type: 'string', description: 'Clear sky, light rain...' },
      temperature: { type: 'number', description: 'In the units asked for' },
      feels_like: { type: 'number', description: 'In the units asked for' },
      humidity: { type: 'integer', description: 'Relative humidity, in percent' },
      wind_speed: { type: 'number', description: 'm/s (metric) or mph (imperial)' },
    },
    readOnly: true,
    openWorld: true,
  },
  async ({ city, units }) => {
    const data = await ask('/data/2.5/weather', { q: city, units }, city);
    return {
      city: String(data.name ?? city),
      country: String(data.sys?.country ?? ''),
      conditions: String(data.weather?.[0]?.description ?? 'unknown'),
      temperature: Number(data.main?.temp),
      feels_like: Number(data.main?.feels_like),
      humidity: Math.round(Number(data.main?.humidity)),
      wind_speed: Number(data.wind?.speed),
    };
  },
);

// The next day, every three hours, drawn as a chart by hosts that show MCP Apps views
// (the tool's `ui`), and as text for the rest.
plugin.tool(
  {
    name: 'forecast',
    description: 'The forecast for a city, every three hours for the next day: temperature and conditions',
    input: {
      city: CITY,
      units: { ...UNITS, description: 'Celsius (metric) or Fahrenheit (imperial)' },
    },
    outputSchema: {
      type: 'object',
      properties: {
        city: { type: 'string', description: 'The city the API matched' },
        country: { type: 'string', description: 'Its country code' },
        units: { type: 'string', enum: ['metric', 'imperial'] },
        points: {
          type: 'array',
          description: 'Every three hours',
          items: {
            type: 'object',
            properties: {
              time: { type: 'string', description: 'UTC, YYYY-MM-DD HH:MM:SS' },
              temperature: { type: 'number', description: 'In the units asked for' },
              conditions: { type: 'string', description: 'Clear sky, light rain...' },
            },
            required: ['time', 'temperature', 'conditions'],
          },
        },
      },
      required: ['city', 'country', 'units', 'points'],
    },
    readOnly: true,
    openWorld: true,
    ui: 'ui://weather/forecast',
  },
  async ({ city, units }) => {
    const data = await ask('/data/2.5/forecast', { q: city, units, cnt: '8' }, city);
    const forecast = {
      city: String(data.city?.name ?? city),
      country: String(data.city?.country ?? ''),
      units,
      points: (Array.isArray(data.list) ? data.list : []).slice(0, 8).map((point) => ({
        time: String(point.dt_txt ?? ''),
        temperature: Number(point.main?.temp),
        conditions: String(point.weather?.[0]?.description ?? 'unknown'),
      })),
    };
    const unit = units === 'imperial' ? '°F' : '°C';
    const said = forecast.points.map((p) => `${p.time.slice(11, 16)} ${p.temperature}${unit} ${p.conditions}`);
    return toolResult({
      content: `${forecast.city}, ${forecast.country}: ${said.join('; ')}`,
      structuredContent: forecast,
    });
  },
);

plugin.uiView(
  {
    uri: 'ui://weather/forecast',
    name: 'forecast',
    title: 'Forecast chart',
    description: "A line chart of the forecast's temperatures",
    prefersBorder: true,
  },
  () => FORECAST_VIEW,
);

export const { tools, resources, prompts, completion } = plugin.exports();
