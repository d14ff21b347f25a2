/** Vite's asset imports as the front-end sources use them (CSS side-effect imports). */
declare module '*.css';
