// Preact + htm: components written as tagged templates, no build step. Every module imports from here.
import { h, render, Fragment } from '../vendor/preact.mjs';
import { useState, useEffect, useLayoutEffect, useRef, useCallback, useMemo, useContext } from '../vendor/preact-hooks.mjs';
import { createContext } from '../vendor/preact.mjs';
import htm from '../vendor/htm.mjs';

export const html = htm.bind(h);
export { h, render, Fragment, createContext, useState, useEffect, useLayoutEffect, useRef, useCallback, useMemo, useContext };
