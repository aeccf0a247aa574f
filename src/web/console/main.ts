import { h, render } from 'preact';
import { App } from './app.js';
import '../browse/styles.css';
import './console.css';

const root = document.getElementById('app')!;
// The static "Loading…" placeholder is for the moment before this script runs.
root.replaceChildren();
render(h(App, {}), root);
