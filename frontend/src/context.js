// What every screen needs: the API client, the translator, the current project and role, a notice line.
import { createContext, useContext } from './lib.js';

export const AppContext = createContext(null);
export const useApp = () => useContext(AppContext);
