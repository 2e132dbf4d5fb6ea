export * from './assistants';
export * from './auth';
export * from './common';
export * from './envelope';
export * from './health';
export * from './knowledge';
export * from './oem';
export * from './projects';
