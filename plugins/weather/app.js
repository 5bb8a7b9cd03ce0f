// weather, a Palisade plugin written in JavaScript: the current weather for a city, from
// OpenWeatherMap's API with the key the server's configuration gives it (a secret), over the
// standard fetch(). Build it with the JavaScript SDK:
//
//   node sdk-guest/js/bin/palisade-js.mjs build plugins/weather/app.js -o weather.wasm
//
// It needs, in the server's configuration (plugins/palisade.toml has them):
//   network = ["api.openweathermap.org"]
//   [plugins.weather.secrets]
//   OPENWEATHER_API_KEY = { env = "OPENWEATHER_API_KEY" }
// and, to use another server with the same API, `[plugins.weather.config] api_url = "..."`.

import { Plugin, ToolError, config, secret } from '@palisade/sdk';

const DEFAULT_API = 'https://api.openweathermap.org';
const TIMEOUT_MS = 10_000;

const plugin = new Plugin();

plugin.tool(
  {
    name: 'current_weather',
    description: 'The weather now in a city: conditions, temperature, humidity and wind',
    input: {
      city: { type: 'string', description: 'The city, optionally with its country code: "Paris" or "Paris,FR"', minLength: 1 },
      units: {
        type: 'string',
        enum: ['metric', 'imperial'],
        description: 'Celsius and m/s (metric) or Fahrenheit and mph (imperial)',
        default: 'metric',
      },
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
    const key = secret('OPENWEATHER_API_KEY');
    const url = new URL('/data/2.5/weather', config('api_url') ?? DEFAULT_API);
    url.searchParams.set('q', city);
    url.searchParams.set('units', units);
    url.searchParams.set('appid', key);
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
    const data = await response.json();
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

export const { tools, resources, prompts, completion } = plugin.exports();
